#!/usr/bin/env python3
"""Whether two analyses predicted the same, change by change, from two kept predict-only runs.

    bench/prediction/same_predictions.py DIR_A DIR_B [--label-a A] [--label-b B] [--common]
    bench/prediction/same_predictions.py --self-test

DIR_A and DIR_B are ACCURACY_KEEP directories of `ACCURACY_PREDICT_ONLY=1` runs against the same
baseline store (bench/prediction/same_predictions.sh makes both). For every change and statistic
(p50, mean) it compares:
- the changed function's hint: its value and interval (bench/prediction/hint.py reads them) and
  the run's flag (regression, improvement, both, no);
- every number of the annotated listing, line by line (durations in any unit, counts, factors,
  percentages), with the words around them left out: the two analyses may word a result
  differently (which is what a refactoring of the presentation changes), not compute another.
  Two printed numbers are the same when they agree at the precision of the less precise one
  ("1.5 ms" and "1.50 ms"; "1.53 min" and "91.8 s").
Prints a Markdown table of the changes whose numbers differ and a summary; exits 1 if a changed
function's prediction or flag differs, 0 otherwise (listing differences are reported, not fatal:
the table says where they are), 2 when a run's files are missing.
"""
import argparse
import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hint  # noqa: E402

TO_NS = {"ns": 1.0, "µs": 1e3, "μs": 1e3, "us": 1e3, "ms": 1e6, "s": 1e9, "min": 60e9, "h": 3600e9}
NUMBER = re.compile(r"(?<![A-Za-z_0-9.])([0-9]+(?:\.[0-9]+)?)\s*(ns|µs|μs|us|ms|min|h|s)?(?![A-Za-z_0-9])")
TRAILER = "--- perfhat-lsp --check"


def fail(message):
    print("same_predictions.py: " + message, file=sys.stderr)
    sys.exit(2)


def significant(text):
    digits = text.replace(".", "").lstrip("0")
    return max(len(digits), 1)


def numbers(line):
    """(value in the unit's base, significant digits) for every number on a listing line."""
    out = []
    for m in NUMBER.finditer(line):
        scale = TO_NS[m.group(2)] if m.group(2) else 1.0
        out.append((float(m.group(1)) * scale, significant(m.group(1))))
    return out


def same_number(a, b):
    (x, dx), (y, dy) = a, b
    if x == y:
        return True
    digits = min(dx, dy)
    if x == 0 or y == 0:
        return False

    def rounded(v):
        return round(v, digits - 1 - int(math.floor(math.log10(abs(v)))))
    return rounded(x) == rounded(y)


def listing(path):
    """The annotated listing's lines (the trailer's timings and handler address left out)."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    for i, line in enumerate(lines):
        if line.startswith(TRAILER):
            return lines[:i]
    return lines


def differing_lines(path_a, path_b):
    a, b = listing(path_a), listing(path_b)
    if len(a) != len(b):
        return ["listing length %d vs %d" % (len(a), len(b))]
    out = []
    for n, (la, lb) in enumerate(zip(a, b), 1):
        na, nb = numbers(la), numbers(lb)
        if len(na) != len(nb) or not all(same_number(x, y) for x, y in zip(na, nb)):
            out.append("line %d: %s | %s" % (n, la.strip()[:160], lb.strip()[:160]))
    return out


def rows(directory):
    """change -> (function, flagged, set) from the run's predictions.tsv."""
    out = {}
    path = os.path.join(directory, "predictions.tsv")
    if not os.path.isfile(path):
        fail("%s has no predictions.tsv (keep a run made with ACCURACY_PREDICT_ONLY=1 and "
             "ACCURACY_KEEP=%s)" % (directory, directory))
    with open(path, encoding="utf-8") as f:
        for line in f:
            cells = line.rstrip("\n").split("\t")
            if len(cells) >= 11:
                out[cells[0]] = (cells[1], cells[9], cells[10])
    return out


def same_hint(a, b):
    return all((x != x and y != y) or x == y for x, y in zip(a, b))


def fmt(h):
    value, low, high = h
    return "%.3f (%.3f–%.3f)" % (value, low, high) if low == low else "%.3f" % value


def self_test():
    cases = [  # (a, b, same)
        ("⏱ 1.5 ms", "⏱ 1.50 ms", True),
        ("+1.53 min per call", "+91.8 s per call", True),
        ("⏱ 1.53 ms", "⏱ 1.54 ms", False),
        ("⏱ 900 µs", "⏱ 0.9 ms", True),
        ("effortSpent() (438 µs) × 8.65 × 5.61 iterations", "438 µs each × 8.65 × 5.61", True),
        ("× 8.65 × 5.61", "× 8.65 × 5.62", False),
        ("⏱ 0 ns", "⏱ ?", False),
    ]
    for a, b, want in cases:
        na, nb = numbers(a), numbers(b)
        got = len(na) == len(nb) and all(same_number(x, y) for x, y in zip(na, nb))
        if got != want:
            sys.exit("same_predictions.py self-test: %r vs %r -> %s, expected %s" % (a, b, got, want))
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        body = "void A::f() {   ~⏱ %s (13.7–62.1 ms)\n  g();   ⏱ 438 µs\n--- perfhat-lsp --check %s\n"
        paths = []
        for n, (value, trailer) in enumerate([("26.4 ms", "x"), ("26.40 ms", "y"), ("26.5 ms", "x")]):
            paths.append(os.path.join(d, "%d.txt" % n))
            with open(paths[-1], "w", encoding="utf-8") as f:
                f.write(body % (value, trailer))
        if differing_lines(paths[0], paths[1]) or len(differing_lines(paths[0], paths[2])) != 1:
            sys.exit("same_predictions.py self-test: listing comparison")
    print("same_predictions.py self-test: ok")
    return 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir_a")
    ap.add_argument("dir_b")
    ap.add_argument("--label-a", default="A")
    ap.add_argument("--label-b", default="B")
    ap.add_argument("--common", action="store_true",
                    help="compare the changes both runs predicted (a run stopped part-way)")
    args = ap.parse_args()
    ra, rb = rows(args.dir_a), rows(args.dir_b)
    missing = sorted(set(ra) ^ set(rb))
    if missing and not args.common:
        fail("changes in one run only: %s (--common compares the others)" % ", ".join(missing))
    if missing:
        print("left out, predicted by one run only: %d changes" % len(missing))
        ra = {c: r for c, r in ra.items() if c in rb}
    if not ra:
        fail("%s has no predictions" % args.dir_a)
    prediction_diffs, listing_diffs = [], []
    for change, (function, flag_a, set_of) in ra.items():
        flag_b = rb[change][1]
        for stat in ("p50", "mean"):
            pa = os.path.join(args.dir_a, "check-%s-%s.txt" % (change, stat))
            pb = os.path.join(args.dir_b, "check-%s-%s.txt" % (change, stat))
            with open(pa, encoding="utf-8") as f:
                ha = hint.find(f.read(), function)
            with open(pb, encoding="utf-8") as f:
                hb = hint.find(f.read(), function)
            flags_differ = stat == "p50" and flag_a != flag_b
            if not same_hint(ha, hb) or flags_differ:
                prediction_diffs.append((change, set_of, function, stat, fmt(ha), fmt(hb),
                                         flag_a, flag_b))
            for d in differing_lines(pa, pb):
                listing_diffs.append((change, stat, d))
    n = len(ra)
    print("| change | set | function | statistic | %s | %s | flag %s / %s |" %
          (args.label_a, args.label_b, args.label_a, args.label_b))
    print("|---|---|---|---|---|---|---|")
    for row in prediction_diffs:
        print("| %s | %s | %s | %s | %s | %s | %s / %s |" % row)
    print()
    changed = {c for c, *_ in prediction_diffs}
    print("changes: %d; the changed function's p50, mean, interval and flag the same in %d, "
          "different in %d" % (n, n - len(changed), len(changed)))
    listed = {c for c, *_ in listing_diffs}
    print("every number of the annotated listing the same in %d of %d changes (both statistics); "
          "%d lines differ" % (n - len(listed), n, len(listing_diffs)))
    for change, stat, d in listing_diffs:
        print("  %s %s %s" % (change, stat, d))
    return 1 if prediction_diffs else 0


if __name__ == "__main__":
    sys.exit(main())
