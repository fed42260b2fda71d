#!/usr/bin/env python3
"""What the editor shows for the hottest functions, from two handlers side by side (issue 23).

    bench/plan/variants_editor.py BUILD FULL_JSON UNITS FULL_ADDR VAR_ADDR [TOP=6]

FULL_JSON is the full-probe handler's batchGet answer and UNITS the release's function keys
(variants_service.sh writes both); the TOP functions of UNITS with the most calls in FULL_JSON
are the ones compared. For each handler (FULL_ADDR: every probe on; VAR_ADDR: the variants'
handler) one real perfhat-lsp runs over stdio (--handler), opens the functions' source files
and asks for their code lenses and for the hover on each function's name: the lens title and
the hover's calls, mean, p50 and exposure rows are what the editor shows. Prints both and the
ratios variants / full of the figures as the editor prints them (three significant digits).
"""
import json
import os
import re
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests/golden"))
from lsp_golden import Lsp  # noqa: E402  (the golden test's JSON-RPC client)

SCALE = {"": 1, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
UNIT_NS = {"ns": 1, "µs": 1e3, "ms": 1e6, "s": 1e9, "min": 60e9}


def count(text):  # formatCount: "66.3k" -> 66300
    m = re.match(r"([\d.]+)([kMGT]?)", text.strip())
    return float(m.group(1)) * SCALE[m.group(2)] if m else None


def duration(text):  # formatDuration: "4.73 ms" -> 4.73e6
    m = re.match(r"([\d.]+) (ns|µs|ms|s|min)\b", text.strip())
    return float(m.group(1)) * UNIT_NS[m.group(2)] if m else None


def row(md, name):
    m = re.search(r"^\| " + re.escape(name) + r" \| (.*) \|$", md, re.M)
    return m.group(1) if m else None


def source_path(item):
    f = item.get("file", "")
    if os.path.isabs(f) and os.path.exists(f):
        return f
    for cand in (os.path.join(ROOT, f), os.path.join(ROOT, "samples/agile", os.path.basename(f))):
        if os.path.exists(cand):
            return cand
    return None


def editor_view(build, addr, targets):
    """{key: {"lens", "hover", "calls", "mean", "p50", "exposure"}} as perfhat-lsp shows them."""
    lsp = Lsp([os.path.join(build, "server/perfhat-lsp"), "--handler", "http://" + addr,
               "--compile-commands", build])
    out = {}
    try:
        lsp.initialize(ROOT)
        by_file = {}
        for key, path in targets:
            by_file.setdefault(path, []).append(key)
        for path, keys in by_file.items():
            uri = "file://" + path
            lsp.notify("textDocument/didOpen", {"textDocument": {
                "uri": uri, "languageId": "cpp", "version": 1, "text": open(path).read()}})
            doc = {"textDocument": {"uri": uri}}
            # The first answer may come before the handler's does (a refresh follows): ask again
            # until every wanted function has its production lens.
            deadline = time.time() + 60
            while True:
                lenses = {}
                for lens in lsp.call("textDocument/codeLens", doc) or []:
                    cmd = lens.get("command") or {}
                    args = cmd.get("arguments") or []
                    if args and args[0] in keys and args[0] not in lenses:
                        lenses[args[0]] = lens
                if all(k in lenses and lenses[k]["command"]["title"].startswith("prod ")
                       for k in keys) or time.time() > deadline:
                    break
                time.sleep(0.5)
            for key in keys:
                lens = lenses.get(key)
                if lens is None:
                    out[key] = {"lens": "(no lens: the server did not find this function)"}
                    continue
                h = lsp.call("textDocument/hover", dict(doc, position=lens["range"]["start"]))
                md = h["contents"]["value"] if h else ""
                calls = row(md, "calls") or ""
                p = (row(md, "p50 · p90 · p95 · p99") or "").split(" · ")
                out[key] = {"lens": lens["command"]["title"], "hover": md,
                            "calls": count(calls.split(" (")[0]) if calls else None,
                            "calls_text": calls.split(" (")[0],
                            "mean": duration(row(md, "mean") or ""), "mean_text": row(md, "mean"),
                            "p50": duration(p[0]) if p[0] else None, "p50_text": p[0],
                            "exposure": row(md, "exposure")}
    finally:
        lsp.close()
    return out


def ratio(a, b):
    return f"{(a / b - 1) * 100:+.1f} %" if a is not None and b else "—"


def main():
    if len(sys.argv) < 6:
        print(__doc__)
        return 2
    build, full_json, units_file, full_addr, var_addr = sys.argv[1:6]
    top = int(sys.argv[6]) if len(sys.argv) > 6 else 6
    build = os.path.abspath(build)
    items = {i["key"]: i for i in json.load(open(full_json))["items"]}
    units = set(open(units_file).read().split("\n"))
    hot = sorted((k for k in items if k in units), key=lambda k: -items[k]["stats"]["count"])[:top]
    targets = [(k, source_path(items[k])) for k in hot if source_path(items[k])]
    full = editor_view(build, full_addr, targets)
    var = editor_view(build, var_addr, targets)
    print("What perfhat-lsp shows (code lens, then hover rows), every probe on vs the variants:")
    for k, _ in targets:
        print(f"  {k}\n    full:     {full[k]['lens']}\n    variants: {var[k]['lens']}")
    print()
    print("| function | calls full → variants | Δ | mean full → variants | Δ | p50 full → variants "
          "| Δ | exposure (variants' hover) |")
    print("|---|---|---|---|---|---|---|---|")
    misses = 0
    for k, _ in targets:
        f, v = full[k], var[k]
        deltas = [(v.get(x), f.get(x)) for x in ("calls", "mean", "p50")]
        misses += sum(1 for a, b in deltas if a is None or not b or abs(a / b - 1) > 0.10)
        print(f"| `{k}` | {f.get('calls_text')} → {v.get('calls_text')} | {ratio(*deltas[0])} "
              f"| {f.get('mean_text')} → {v.get('mean_text')} | {ratio(*deltas[1])} "
              f"| {f.get('p50_text')} → {v.get('p50_text')} | {ratio(*deltas[2])} "
              f"| {v.get('exposure') or '—'} |")
    print(f"figures outside ±10 %: {misses} of {3 * len(targets)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
