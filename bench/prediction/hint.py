#!/usr/bin/env python3
"""The predicted time of FUNCTION in a `perfhat-lsp --check` listing, with its interval.

    bench/prediction/hint.py CHECK_OUTPUT FUNCTION   ->  "VALUE_MS LOW_MS HIGH_MS"

The hint sits on the definition's first line (qualified name, as the sample's .cc files define
functions) or on one of the next two (a signature's continuation). Accepted forms, leniently:
`⏱ 24.1 ms`, `~⏱ 24.1 ms (18.0–31.2 ms)`, `(18–31 ms)`, `(18 ms – 31.2 ms)`, `(18-31)` (no unit:
the value's unit), `(18…31 ms)`, `(18 to 31 ms)`, `(18 ms–?)` (open above: 'inf'). 'nan' for what the listing does
not show.
"""
import re
import sys

UNIT = {"ns": 1e-6, "µs": 1e-3, "us": 1e-3, "μs": 1e-3, "ms": 1.0, "s": 1e3}
U = r"(ns|µs|μs|us|ms|s)"
VALUE = re.compile(r"~?⏱\s*([0-9]+(?:\.[0-9]+)?)\s*" + U + r"(?![A-Za-z])")


def parse(line):
    """(value, low, high) in ms from one line, or None when it shows no time."""
    m = VALUE.search(line)
    if not m:
        return None
    unit = m.group(2)
    value = float(m.group(1)) * UNIT[unit]
    rest = line[m.end():]
    rest = re.sub(r"^\s*\+\s*\?", "", rest)  # "12 ms + ?": a lower bound, its interval follows
    i = re.match(r"\s*\(\s*([0-9]+(?:\.[0-9]+)?)\s*" + U + r"?\s*(?:–|—|-|…|\.\.|to)\s*"
                 r"([0-9]+(?:\.[0-9]+)?)\s*" + U + r"?\s*\)", rest)
    if not i:
        # "(290 µs–?)": a part has no data, the range is open above.
        o = re.match(r"\s*\(\s*([0-9]+(?:\.[0-9]+)?)\s*" + U + r"?\s*(?:–|—|-)\s*\?\s*\)", rest)
        if o:
            return value, float(o.group(1)) * UNIT[o.group(2) or unit], float("inf")
        return value, float("nan"), float("nan")
    high_unit = i.group(4) or unit
    low_unit = i.group(2) or high_unit
    return value, float(i.group(1)) * UNIT[low_unit], float(i.group(3)) * UNIT[high_unit]


def find(text, function):
    lines = text.splitlines()
    for n, line in enumerate(lines):
        if re.search(r"::%s\(" % re.escape(function), line) and not line.lstrip().startswith("//"):
            for candidate in lines[n:n + 3]:
                found = parse(candidate)
                if found:
                    return found
    return float("nan"), float("nan"), float("nan")


def main():
    if len(sys.argv) == 2 and sys.argv[1] == "--self-test":
        cases = {
            "void A::f() {   ⏱ 4.73 ms": (4.73, None, None),
            "void A::f() {   ~⏱ 24.1 ms (18.0–31.2 ms)": (24.1, 18.0, 31.2),
            "void A::f() {   ~⏱ 24 ms (18–31)": (24, 18, 31),
            "void A::f() {   ~⏱ 900 µs (0.5 ms - 1.2 ms)": (0.9, 0.5, 1.2),
            "void A::f() {   ~⏱ 2.1 s (1.5…3 s) ⚠": (2100, 1500, 3000),
            "void A::f() {   ~⏱ 485 µs + ? (325–645 µs) (prod 3.44 ms)": (0.485, 0.325, 0.645),
            "void A::f() {   ~⏱ 485 µs + ? (290 µs–?) (prod 3.44 ms)": (0.485, 0.29, float("inf")),
        }
        for line, want in cases.items():
            got = parse(line)
            for g, w in zip(got, want):
                ok = (w is None and g != g) or (w is not None and (g == w or abs(g - w) < 1e-9))
                if not ok:
                    sys.exit(f"hint.py self-test: {line!r} -> {got}, expected {want}")
        print("hint.py self-test: ok")
        return
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    value, low, high = find(open(sys.argv[1], encoding="utf-8").read(), sys.argv[2])
    print("%.3f %.3f %.3f" % (value, low, high))


if __name__ == "__main__":
    main()
