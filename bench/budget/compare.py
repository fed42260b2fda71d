#!/usr/bin/env python3
"""Budget runs against the full-tracing runs: per-function p50 error, split traced / sampled
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
# Every full-tracing run ("full", and "full-b", "full-c", ... run between or after the budget
# runs): each function's reference p50 is their median (the mean of two), which one disturbed run
# cannot move far; their own disagreement is the method's noise floor, shown first.
fulls = [c for c in configs if c == "full" or c.startswith("full-")]
full_runs = {c: load(c, "p50.json") for c in fulls}
full = dict(full_runs.get("full", {}))


def leave_one_out(c, key):
    """The reference without run c: the other full runs' median p50 (None without one)."""
    others = [r[key]["p50_ns"] for o, r in full_runs.items() if o != c and r.get(key, {}).get("p50_ns")]
    return statistics.median(others) if others else None


if len(full_runs) > 1:
    keys = [k for k, v in full.items() if v.get("count", 0) >= min_calls and v.get("p50_ns")]
    print(f"\nfull-tracing runs against each other (A/A, {len(keys)} functions with ≥ {min_calls} "
          f"calls in 'full'; each run against the median of the others):")
    for c in fulls:
        aa = [(full_runs[c][k]["p50_ns"] / leave_one_out(c, k) - 1, k) for k in keys
              if full_runs[c].get(k, {}).get("p50_ns") and leave_one_out(c, k)]
        print(f"    {c}: {sum(abs(d) <= 0.10 for d, _ in aa)} of {len(aa)} within 10 %, median "
              f"|difference| {100 * statistics.median(abs(d) for d, _ in aa) if aa else float('nan'):.1f} %")
        for d, key in sorted(aa, reverse=True):
            print(f"    {c}: p50 {100 * d:+.1f} %  {key}", file=sys.stderr)
    reference = {}
    for k in keys:
        runs = [r[k]["p50_ns"] for r in full_runs.values() if r.get(k, {}).get("p50_ns")]
        reference[k] = statistics.median(runs)
        full[k] = dict(full[k], p50_ns=reference[k], spread=max(abs(x / reference[k] - 1) for x in runs))
    if len(full_runs) > 2:
        # How far each function's reference may itself be off: every run within ±5 % of the
        # median means a run of the same code lands there too.
        steady = sum(full[k]["spread"] <= 0.05 for k in keys)
        print(f"    reference (median of {len(full_runs)} runs): {steady} of {len(keys)} functions "
              f"with every full run within 5 % of it")


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
    if c in fulls or c == "disabled":
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
                             share_traced.get(k), ref.get("spread")))
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
        for _, key, signed, count, recorded, share, spread in sorted(errors[kind], reverse=True):
            traced_for = f", class traced {100 * share:.0f} % of the run" if share is not None else ""
            traced_for += f", full runs within ±{100 * spread:.1f} %" if spread is not None else ""
            print(f"    {c} {kind}: p50 {100 * signed:+.1f} %, weighted count {100 * count:+.1f} %"
                  f", ~{recorded:.0f} recorded at the end's fraction{traced_for}  {key}",
                  file=sys.stderr)
