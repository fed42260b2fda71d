#!/usr/bin/env python3
"""Budget runs against the full-tracing run: per-function p50 error, split traced / sampled
(a class the plan reports in full, or at a fraction). Functions of classes idle in the plan's
last windows are left out.

    compare.py RUN_DIR MIN_CALLS CONFIG...   (RUN_DIR/<config>/{p50.json,status-steady.json,perf_share.txt})
"""
import json
import os
import statistics
import sys

root, min_calls, configs = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
load = lambda c, f: json.load(open(os.path.join(root, c, f)))
full = load("full", "p50.json") if "full" in configs else {}


def qualified(key):
    """'int agile::X::f(int) const' style keys -> 'agile::X::f' (the library's class lookup)."""
    # The handler writes the demangler's "(anonymous namespace)", the library's status GCC's
    # "{anonymous}".
    key = key.replace("(anonymous namespace)", "{anonymous}")
    head, depth = key, 0
    for i, ch in enumerate(key):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "(" and depth == 0:
            head = key[:i]
            break
    return head.rsplit(" ", 1)[-1]


print("\n| configuration | libperfhat share of service CPU samples (perf) | library's own measure "
      "(collector CPU ÷ process CPU) | governor | classes traced / sampled | functions compared "
      "traced: p50 within 10 % | sampled: p50 within 25 % | worst traced / sampled |")
print("|---|---|---|---|---|---|---|---|")
for c in configs:
    share = open(os.path.join(root, c, "perf_share.txt")).read().split()
    if c in ("full", "disabled"):
        what = "all" if c == "full" else "none (probes off)"
        print(f"| {c} | {share[0]} % ({share[1]} samples) | — | — | {what} | — | — | — | — |")
        continue
    status = load(c, "status-steady.json")
    fraction = {k["name"]: k["fraction"] for k in status["classes"]}
    # Classes with no calls in the last windows were only active in start-up and warm-up (their
    # calls are not the steady state the plan governs): left out.
    active = {k["name"] for k in status["classes"] if k["frequency_hz"] > 0}
    klass = {f["function"]: f["class"] for f in status["functions"]}
    p50 = load(c, "p50.json")
    errors = {"traced": [], "sampled": []}
    for key, ref in full.items():
        if ref.get("count", 0) < min_calls or key not in p50 or not ref.get("p50_ns"):
            continue
        k = klass.get(qualified(key))
        if k is None or k not in active or not p50[key].get("p50_ns"):
            continue
        kind = "traced" if fraction.get(k, 0) >= 1 else "sampled"
        errors[kind].append((abs(p50[key]["p50_ns"] / ref["p50_ns"] - 1), key,
                             p50[key]["p50_ns"] / ref["p50_ns"] - 1,
                             p50[key].get("count", 0) / ref["count"] - 1))
    traced = sum(1 for k in status["classes"] if k["traced"])
    ok = lambda kind, lim: f"{sum(e[0] <= lim for e in errors[kind])}/{len(errors[kind])}"
    worst = lambda kind: f"{100 * max(errors[kind])[0]:.1f} %" if errors[kind] else "—"
    print(f"| {c} ({status['mode']}) | {share[0]} % ({share[1]} samples) | "
          f"{100 * status['measured_overhead']:.2f} % (predicted {100 * status['predicted_overhead']:.2f} %) | "
          f"{status['governor']:.2f} | {traced} / {len(status['classes']) - traced} | "
          f"{len(errors['traced']) + len(errors['sampled'])} | {ok('traced', 0.10)} | "
          f"{ok('sampled', 0.25)} | {worst('traced')} / {worst('sampled')} |")
    for kind in ("traced", "sampled"):
        for _, key, signed, count in sorted(errors[kind], reverse=True):
            print(f"    {c} {kind}: p50 {100 * signed:+.1f} %, weighted count {100 * count:+.1f} %"
                  f"  {key}", file=sys.stderr)
