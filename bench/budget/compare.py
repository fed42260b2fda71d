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
# With a second full run after the budget runs, each function's reference is the two full runs'
# mean p50 (the machine's load drifts over a run of the bench); the runs' own disagreement is the
# method's noise floor, shown first.
full_b = load("full-b", "p50.json") if "full-b" in configs else {}
if full_b:
    aa = []
    for key, ref in full.items():
        other = full_b.get(key, {})
        if ref.get("count", 0) >= min_calls and ref.get("p50_ns") and other.get("p50_ns"):
            aa.append((other["p50_ns"] / ref["p50_ns"] - 1, key))
    within = sum(abs(d) <= 0.10 for d, _ in aa)
    print(f"\nfull-b against full (A/A, {len(aa)} functions with ≥ {min_calls} calls): "
          f"{within} within 10 %, median |difference| "
          f"{100 * statistics.median(abs(d) for d, _ in aa) if aa else float('nan'):.1f} %")
    for d, key in sorted(aa, reverse=True):
        print(f"    full-b: p50 {100 * d:+.1f} %  {key}", file=sys.stderr)
    full = {k: dict(v, p50_ns=(v["p50_ns"] + full_b[k]["p50_ns"]) / 2)
            if v.get("p50_ns") and full_b.get(k, {}).get("p50_ns") else v
            for k, v in full.items()}


def client_p50s(c):
    """The workload's own per-route p50 latency (ms) in the steady phase: what the service's
    users saw, whatever the probes measured."""
    try:
        return {r: v["p50_ms"] for r, v in load(c, "steady.json")["routes"].items()}
    except (OSError, KeyError, ValueError):
        return {}


ref_client = client_p50s("full")
if ref_client:
    print("\nclient-side p50 latency against the full run (steady phase, per route): " +
          "; ".join(f"{c} " + ", ".join(
              f"{r} {100 * (v / ref_client[r] - 1):+.0f} %"
              for r, v in sorted(client_p50s(c).items()) if ref_client.get(r))
              for c in configs if c != "full"))


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


def traced_share(c):
    """Per class, the share of the service's run (start to the end of the steady phase) in which
    the plans traced it, from the plans the bench saw adopted (status-history.jsonl); before the
    first plan every call is kept. Probing mode records a class's calls only while it is traced,
    so its weighted count is about this share of the full run's. {} without a history."""
    try:
        history = [json.loads(line) for line in open(os.path.join(root, c, "status-history.jsonl"))]
        phases = dict(line.split() for line in open(os.path.join(root, c, "phases.txt")))
        end = float(phases["end"])
    except (OSError, KeyError, ValueError):
        return {}
    if not history or end <= 0:
        return {}
    # A status is written when a plan is adopted (and every 10 windows): a plan holds from the
    # status that first shows it to the next one.
    traced_s, t_prev, prev = {}, 0.0, None
    for h in history + [{"t_s": end, "status": None}]:
        t = min(float(h["t_s"]), end)
        for k in (prev["classes"] if prev else []):
            traced_s[k["name"]] = traced_s.get(k["name"], 0) + (t - t_prev) * (1 if k["traced"] else 0)
        if prev is None:  # before the first plan: everything kept
            first = h["status"]["classes"] if h["status"] else []
            for k in first:
                traced_s[k["name"]] = traced_s.get(k["name"], 0) + t
        t_prev, prev = t, h["status"]
    return {k: v / end for k, v in traced_s.items()}


print("\n| configuration | libperfhat share of service CPU samples (perf) | library's own measure "
      "(collector CPU ÷ process CPU) | governor | classes traced / sampled | functions compared "
      "traced: p50 within 10 % | sampled: p50 within 25 % | worst traced / sampled |")
print("|---|---|---|---|---|---|---|---|")
for c in configs:
    share = open(os.path.join(root, c, "perf_share.txt")).read().split()
    if c in ("full", "full-b", "disabled"):
        what = "none (probes off)" if c == "disabled" else "all"
        print(f"| {c} | {share[0]} % ({share[1]} samples) | — | — | {what} | — | — | — | — |")
        continue
    status = load(c, "status-steady.json")
    fraction = {k["name"]: k["fraction"] for k in status["classes"]}
    # Classes with no calls in the last windows were only active in start-up and warm-up (their
    # calls are not the steady state the plan governs): left out.
    active = {k["name"] for k in status["classes"] if k["frequency_hz"] > 0}
    klass = {f["function"]: f["class"] for f in status["functions"]}
    p50 = load(c, "p50.json")
    share_traced = traced_share(c)
    errors = {"traced": [], "sampled": []}
    for key, ref in full.items():
        if ref.get("count", 0) < min_calls or key not in p50 or not ref.get("p50_ns"):
            continue
        k = klass.get(qualified(key))
        if k is None or k not in active or not p50[key].get("p50_ns"):
            continue
        kind = "traced" if fraction.get(k, 0) >= 1 else "sampled"
        # Calls actually recorded (the weighted count × the class's fraction at the end): a p50
        # of a few dozen recorded calls moves by more than 10 % on its own.
        recorded = p50[key].get("count", 0) * min(1.0, fraction.get(k, 0))
        errors[kind].append((abs(p50[key]["p50_ns"] / ref["p50_ns"] - 1), key,
                             p50[key]["p50_ns"] / ref["p50_ns"] - 1,
                             p50[key].get("count", 0) / ref["count"] - 1, recorded,
                             share_traced.get(k)))
    traced = sum(1 for k in status["classes"] if k["traced"])
    ok = lambda kind, lim: f"{sum(e[0] <= lim for e in errors[kind])}/{len(errors[kind])}"
    worst = lambda kind: f"{100 * max(errors[kind])[0]:.1f} %" if errors[kind] else "—"
    print(f"| {c} ({status['mode']}) | {share[0]} % ({share[1]} samples) | "
          f"{100 * status['measured_overhead']:.2f} %, mean {100 * status.get('measured_overhead_mean', 0):.2f} % "
          f"(collector {100 * status.get('collector_share_mean', 0):.2f} %) "
          f"(predicted {100 * status['predicted_overhead']:.2f} %) | "
          f"{status['governor']:.2f} | {traced} / {len(status['classes']) - traced} | "
          f"{len(errors['traced']) + len(errors['sampled'])} | {ok('traced', 0.10)} | "
          f"{ok('sampled', 0.25)} | {worst('traced')} / {worst('sampled')} |")
    for kind in ("traced", "sampled"):
        for _, key, signed, count, recorded, share in sorted(errors[kind], reverse=True):
            traced_for = f", class traced {100 * share:.0f} % of the run" if share is not None else ""
            print(f"    {c} {kind}: p50 {100 * signed:+.1f} %, weighted count {100 * count:+.1f} %"
                  f", ~{recorded:.0f} recorded at the end's fraction{traced_for}  {key}",
                  file=sys.stderr)
