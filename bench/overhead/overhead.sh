#!/usr/bin/env bash
# Monitoring overhead of libperfhat on the sample service, measured as the service's CPU time per
# request: the same workload against the same service built without probes (agile-service-bare)
# and instrumented in three modes:
#
#   full             PERFHAT_SAMPLER=full: every call recorded and exported
#   phase1           PERFHAT_SAMPLER=none: Tigris phase-1 estimators only, nothing exported
#   tigris-adaptive  PERFHAT_FILTER="more frequent ∪ most expensive", adaptive sampler, 5 s cycle
#   full-agg, tigris-adaptive-agg
#                    the same with PERFHAT_EXPORT=aggregates: every recorded call goes into
#                    in-process histograms, exported as rows to POST /v1/aggregates
#                    (docs/aggregate-export.md) instead of one span per call
#
#   bench/overhead/overhead.sh [BUILD_DIR] [SECONDS_PER_RUN] [REPETITIONS]
#
# Each run (fresh database and deployed handler) has an unmeasured warm-up and two measured
# phases:
#   steady     a fixed rate the whole stack sustains (OVERHEAD_STEADY_RATE, default 300 req/s):
#              the service's CPU per request (time on a CPU of every thread, exporter and
#              Tigris analysis included, from /proc/PID/task/*/schedstat, ÷ requests served)
#              and spans exported per request. This is the overhead figure: on a shared 2-core
#              machine CPU time moves far less with other people's builds than throughput
#              does, and at a rate the exporter keeps up with, "full" really exports every call.
#   saturated  far above capacity (OVERHEAD_RATE) for OVERHEAD_SATURATED_S seconds: throughput
#              (0 skips it: more, shorter repetitions of the steady phase for the same time).
# The configurations' order is rotated per repetition; overheads are the median over
# repetitions of each configuration's figure divided by bare's in the same repetition (adjacent
# in time, so slow drift cancels), with the min–max over repetitions.
#
# OVERHEAD_MIX=cpu (default) drives the CPU-bound reports (agile-workload --cpu-bound);
# OVERHEAD_MIX=default the latency-bound default navigation mix. OVERHEAD_CONFIGS picks and orders
# the configurations (default: all six). OVERHEAD_PERF=1 also samples the service with perf during
# the steady phase and reports the share of its CPU samples in libperfhat frames (perf_share.py):
# steadier than CPU time across runs, but perf's own sampling then adds to every configuration's
# CPU, so compare shares, not CPU, in such runs.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build}
SECONDS_PER_RUN=${2:-12}
REPS=${3:-3}
MIX=${OVERHEAD_MIX:-cpu}
WARMUP_S=${OVERHEAD_WARMUP_S:-3}
STEADY_RATE=${OVERHEAD_STEADY_RATE:-300}
# Few connections in the steady phase: every open keep-alive connection costs the server CPU
# while idle, which at a moderate rate would otherwise be charged to the requests.
STEADY_WORKERS=${OVERHEAD_STEADY_WORKERS:-4}
RATE=${OVERHEAD_RATE:-20000}  # far above capacity: the service runs saturated
SATURATED_S=${OVERHEAD_SATURATED_S:-6}
PERF=${OVERHEAD_PERF:-0}
if [ "$PERF" = 1 ] && ! command -v perf >/dev/null; then
  echo "OVERHEAD_PERF=1 needs perf (apt-get install linux-perf)" >&2; exit 2
fi
WORKERS=${OVERHEAD_WORKERS:-16}
# The reports' read model reloads when older than this (the service's default is 5 s). A reload
# costs ~100 ms of CPU, and whether one or two land in a 10 s window moved CPU per request by
# ±15 % between runs of the same configuration: far more than the overhead being measured. The
# CPU-bound mix only reads, so the benchmark loads it once (in the warm-up).
REPORT_MAX_AGE_S=${OVERHEAD_REPORT_MAX_AGE_S:-3600}
# libperfhat exports every 5 s by default; at tens of thousands of spans/s that overflows the
# per-thread rings (4096 spans) and "full" would measure the cheap drop path. Exporting every
# 0.2 s keeps the rings short; "spans exported/request" in the table shows what arrived.
EXPORT_INTERVAL_S=${OVERHEAD_EXPORT_INTERVAL_S:-0.2}
S=$BUILD/samples
HANDLER=$BUILD/feedback-handler/perfhat-handler
for bin in "$S/agile-service" "$S/agile-service-bare" "$S/agile-userdir" "$S/agile-workload" "$HANDLER"; do
  [ -x "$bin" ] || { echo "missing $bin (build it in $BUILD first)" >&2; exit 1; }
done
case $MIX in
  cpu) mix_args=(--cpu-bound) ;;
  default) mix_args=() ;;
  *) echo "OVERHEAD_MIX must be cpu or default, not '$MIX'" >&2; exit 2 ;;
esac
TMP=$(mktemp -d "${TMPDIR:-/tmp}/perfhat-overhead.XXXXXX")
# shellcheck source=../../scripts/lib/processes.sh
. "$PWD/scripts/lib/processes.sh"
trap 'stop_all; rm -rf "$TMP"' EXIT

ingested() {  # spans (or, from the -agg configurations, histogram rows) the handler has merged
  curl -s "http://$handler/metrics" |
    awk '/^perfhat_handler_(spans|aggregate_rows)_ingested_total/ {n += $2} END {print n + 0}'
}

# CPU time of a process in ns: the sum over its threads of the first field of
# /proc/PID/task/TID/schedstat (time on a CPU, ns). utime + stime from /proc/PID/stat count in
# clock ticks (10 ms): over a 10 s phase at 300 req/s that is 3.3 µs per request, a 1.5 % step of
# the ~200 µs being measured. A thread that exits within a phase takes its time with it (the
# service's and the handler's threads are pools that live as long as the process). Without
# schedstat (a kernel built without CONFIG_SCHED_INFO): the clock ticks, in ns.
cpu_ns() {
  if [ -r "/proc/$1/schedstat" ]; then
    cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ns += $1} END {printf "%d\n", ns}'
  else
    sed 's/^.*) //' "/proc/$1/stat" | awk -v hz="$TICK_HZ" '{printf "%d\n", ($12 + $13) * 1e9 / hz}'
  fi
}

echo "[overhead] mix=$MIX, $REPS repetitions; per run ${WARMUP_S}s warm-up, ${SECONDS_PER_RUN}s at" \
     "$STEADY_RATE req/s ($STEADY_WORKERS connections), ${SATURATED_S}s at $RATE req/s offered" \
     "($WORKERS connections);" \
     "export every ${EXPORT_INTERVAL_S}s"
echo "[overhead] load at start: $(uptime | sed 's/.*load average/load average/')"
start userdir "$S/agile-userdir" --listen 127.0.0.1:0
USERDIR=$ADDR
TOKEN=overhead-bench
read -r -a configs <<< "${OVERHEAD_CONFIGS:-bare full phase1 tigris-adaptive full-agg tigris-adaptive-agg}"
TICK_HZ=$(getconf CLK_TCK)
: > "$TMP/results.tsv"
for rep in $(seq "$REPS"); do
  for i in "${!configs[@]}"; do
    cfg=${configs[$(( (i + rep - 1) % ${#configs[@]} ))]}
    run=$TMP/$cfg-$rep
    mkdir -p "$run"
    start "handler-$cfg-$rep" "$HANDLER" --mode deployed --listen 127.0.0.1:0 --store "$run/h.sqlite" --token "$TOKEN"
    handler=$ADDR; handler_pid=$LAST_PID
    env_args=(PERFHAT_ENDPOINT="http://$handler" PERFHAT_TOKEN="$TOKEN" OTEL_SERVICE_NAME=agile-service)
    interval=(PERFHAT_EXPORT_INTERVAL_S="$EXPORT_INTERVAL_S")
    case $cfg in
      bare) bin=$S/agile-service-bare ;;
      full) bin=$S/agile-service; env_args+=(PERFHAT_SAMPLER=full PERFHAT_FILTER=) ;;
      phase1) bin=$S/agile-service; env_args+=(PERFHAT_SAMPLER=none PERFHAT_FILTER=) ;;
      tigris-adaptive) bin=$S/agile-service; env_args+=(PERFHAT_SAMPLER=adaptive
                         "PERFHAT_FILTER=more frequent ∪ most expensive" PERFHAT_CYCLE_S=5) ;;
      # Histograms have no rings to overflow: the default export interval (5 s), as deployed.
      full-agg) bin=$S/agile-service; interval=()
                env_args+=(PERFHAT_SAMPLER=full PERFHAT_FILTER= PERFHAT_EXPORT=aggregates) ;;
      tigris-adaptive-agg) bin=$S/agile-service; interval=()
                env_args+=(PERFHAT_SAMPLER=adaptive "PERFHAT_FILTER=more frequent ∪ most expensive"
                           PERFHAT_CYCLE_S=5 PERFHAT_EXPORT=aggregates) ;;
      *) echo "unknown configuration '$cfg'" >&2; exit 2 ;;
    esac
    # env execs the service, so LAST_PID is the service's own pid.
    start "service-$cfg-$rep" env "${env_args[@]}" "${interval[@]}" "$bin" --listen 127.0.0.1:0 --db "$run/a.sqlite" --tcp-nodelay \
      --userdir "http://$USERDIR" --report-max-age-s "$REPORT_MAX_AGE_S"
    service=$ADDR; service_pid=$LAST_PID
    load=(--target "http://$service" --shape stationary --quiet "${mix_args[@]}")
    "$S/agile-workload" "${load[@]}" --workers "$STEADY_WORKERS" --rate "$STEADY_RATE" --duration "$WARMUP_S" \
      --seed "$((100 + rep))" 2>"$run/warmup.log"
    measure() {  # measure PHASE RATE WORKERS SECONDS SEED -> one row of results.tsv
      local phase=$1 rate=$2 workers=$3 seconds=$4 seed=$5 s0 h0 n0 s1 h1 n1 perf_pid="" share=-
      sleep "$EXPORT_INTERVAL_S"  # let the previous phase's spans reach the handler
      s0=$(cpu_ns "$service_pid"); h0=$(cpu_ns "$handler_pid"); n0=$(ingested)
      if [ "$PERF" = 1 ] && [ "$phase" = steady ]; then
        perf record -q -e cpu-clock --call-graph dwarf,16384 -F 1000 -p "$service_pid" \
          -o "$run/perf.data" -- sleep "$seconds" >"$run/perf.log" 2>&1 &
        perf_pid=$!
      fi
      "$S/agile-workload" "${load[@]}" --workers "$workers" --rate "$rate" --duration "$seconds" --seed "$seed" \
        --report "$run/$phase.json" 2>"$run/$phase.log"
      s1=$(cpu_ns "$service_pid"); h1=$(cpu_ns "$handler_pid")
      if [ -n "$perf_pid" ]; then
        wait "$perf_pid" || true
        share=$(perf script -i "$run/perf.data" -F comm,tid,ip,sym 2>/dev/null |
                python3 bench/overhead/perf_share.py | awk '{print $1}')
        rm -f "$run/perf.data"
      fi
      sleep "$EXPORT_INTERVAL_S"; n1=$(ingested)
      python3 - "$cfg" "$rep" "$phase" "$run/$phase.json" "$((s1 - s0))" "$((h1 - h0))" \
        "$((n1 - n0))" "$share" >> "$TMP/results.tsv" <<'PY'
import json, sys
cfg, rep, phase, path, service_ns, handler_ns, spans, share = sys.argv[1:]
r = json.load(open(path))
served = max(1, r["ok"] + r["errors"])
us = lambda ns: int(ns) / 1e3 / served
print("\t".join(str(v) for v in (
    cfg, rep, phase, served, r["errors"], f"{r['throughput_per_s']:.2f}",
    f"{us(service_ns):.1f}", f"{us(handler_ns):.1f}", f"{int(spans) / served:.1f}", share)))
PY
      tail -n1 "$TMP/results.tsv" | awk -F'\t' -v n="$(( (rep - 1) * ${#configs[@]} + i + 1 ))" \
        -v all="$(( REPS * ${#configs[@]} ))" '{printf "[overhead] run %d/%d %-15s #%s %-9s %6s req (%s errors) %7s req/s  service CPU %6s us/req  handler CPU %6s us/req  %6s spans/req  libperfhat share %s %%\n", n, all, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10}'
    }
    measure steady "$STEADY_RATE" "$STEADY_WORKERS" "$SECONDS_PER_RUN" "$rep"
    if [ "$SATURATED_S" != 0 ]; then measure saturated "$RATE" "$WORKERS" "$SATURATED_S" "$((50 + rep))"; fi
    kill -TERM "$service_pid"; wait "$service_pid" 2>/dev/null || true
    kill -TERM "$handler_pid"; wait "$handler_pid" 2>/dev/null || true
  done
done
echo "[overhead] load at end: $(uptime | sed 's/.*load average/load average/')"
python3 - "$TMP/results.tsv" "$MIX" <<'PY'
import statistics, sys
runs = {}  # (cfg, phase) -> rep -> row
for line in open(sys.argv[1]).read().splitlines():
    cfg, rep, phase, served, errors, tput, cpu, hcpu, spans, share = line.split("\t")
    runs.setdefault((cfg, phase), {})[rep] = dict(served=int(served), errors=int(errors),
        tput=float(tput), cpu=float(cpu), hcpu=float(hcpu), spans=float(spans),
        share=None if share == "-" else float(share))
thesis = {"bare": "—", "full": "22.6–29.9 %", "phase1": "(Tigris phase 1)",
          "tigris-adaptive": "3.4–24.7 %", "full-agg": "22.6–29.9 %",
          "tigris-adaptive-agg": "3.4–24.7 %"}
def spread(values, fmt):
    m = statistics.median(values)
    return f"{fmt.format(m)} [{fmt.format(min(values))}…{fmt.format(max(values))}]"
def vs_bare(cfg, phase, key):
    base, reps = runs.get(("bare", phase), {}), runs.get((cfg, phase), {})
    paired = [r for r in reps if r in base]
    if cfg == "bare" or not paired: return "—"
    return spread([100 * (reps[r][key] / base[r][key] - 1) for r in paired], "{:+.1f}") + " %"
n = len(runs.get(("bare", "steady"), {}))
print(f"\nmix={sys.argv[2]}; median [min…max] over {n} repetitions; 'vs bare' = ratio to bare in "
      "the same repetition − 1")
print("| configuration | CPU µs/request (steady) | CPU overhead vs bare | spans (-agg: rows) exported/request "
      "| handler CPU µs/request | throughput req/s (saturated) | throughput vs bare | spans/request "
      "(saturated) | libperfhat share of service CPU (perf) | thesis penalty |")
print("|---|---|---|---|---|---|---|---|---|---|")
for cfg in ["bare", "full", "phase1", "tigris-adaptive", "full-agg", "tigris-adaptive-agg"]:
    st, sa = runs.get((cfg, "steady"), {}), runs.get((cfg, "saturated"), {})
    if not st: continue
    def col(rows, key, fmt):
        values = [v[key] for v in rows.values() if v.get(key) is not None]
        return spread(values, fmt) if values else "—"
    print(f"| {cfg} | {col(st, 'cpu', '{:.0f}')} | {vs_bare(cfg, 'steady', 'cpu')} | "
          f"{col(st, 'spans', '{:.1f}')} | {col(st, 'hcpu', '{:.0f}')} | {col(sa, 'tput', '{:.0f}')} | "
          f"{vs_bare(cfg, 'saturated', 'tput')} | {col(sa, 'spans', '{:.1f}')} | "
          f"{col(st, 'share', '{:.1f}')} % | {thesis[cfg]} |")
errors = sum(v["errors"] for reps in runs.values() for v in reps.values())
if errors:
    print(f"\nwarning: {errors} failed requests in total (counted as served)")
PY
