#!/usr/bin/env bash
# Collection budget on the sample service (issue #22): the same CPU-bound workload against
#   full       PERFHAT_SAMPLER=full, every call traced (the reference p50s)
#   budget-1   PERFHAT_BUDGET=0.01 (1 % of the process's CPU), rates mode
#   budget-3   PERFHAT_BUDGET=0.03
#   disabled   PERFHAT_ENABLED=0: every probe compiled in and off (one load and a branch each, the
#              cost of a site the budget disarms), the floor of what perf files under libperfhat
# each with a fresh handler and database. Per run: a warm-up, then a steady phase during which
# perf samples the service (the libperfhat share of its CPU samples, bench/overhead/perf_share.py,
# as in the overhead benchmark). After each run every function's p50 is read back from the
# handler (batchGet); the budget runs' p50s are compared with the full run's, split by whether the
# library's last plan (PERFHAT_BUDGET_STATUS) traced the function's class in full or sampled it.
#
#   bench/budget/budget_bench.sh [BUILD_DIR] [STEADY_SECONDS] [RATE]
#
# BUDGET_CONFIGS picks the configurations (default "full budget-1 full-b budget-3 full-c"; add
# "disabled" for the floor). Full-tracing runs named "full-b", "full-c", ... go between or after
# the budget runs: compare.py then shows how far the full runs' p50s differ, the method's own
# noise, and takes each function's reference p50 as their median, which one disturbed run cannot
# move far (on a shared VM neighbouring full runs moved a request handler's p50 by up to 30 %:
# bench/README.md, session 47, so the default interleaves three);
# BUDGET_MODE=probing
# runs the budgets in probing mode instead. Functions with fewer than BUDGET_MIN_CALLS calls in
# the full run (default 200) are left out of the comparison (their p50 moves between two full
# runs as much).
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build}
STEADY_S=${2:-30}
RATE=${3:-300}
WARMUP_S=${BUDGET_WARMUP_S:-5}
MODE=${BUDGET_MODE:-rates}
MIN_CALLS=${BUDGET_MIN_CALLS:-200}
read -r -a configs <<< "${BUDGET_CONFIGS:-full budget-1 full-b budget-3 full-c}"
S=$BUILD/samples
HANDLER=$BUILD/feedback-handler/perfhat-handler
for bin in "$S/agile-service" "$S/agile-userdir" "$S/agile-workload" "$HANDLER"; do
  [ -x "$bin" ] || { echo "missing $bin (build it in $BUILD first)" >&2; exit 1; }
done
command -v perf >/dev/null || { echo "needs perf (apt-get install linux-perf)" >&2; exit 2; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/perfhat-budget.XXXXXX")
# shellcheck source=../../scripts/lib/processes.sh
. "$PWD/scripts/lib/processes.sh"
trap 'stop_all; [ -n "${BUDGET_KEEP:-}" ] || rm -rf "$TMP"' EXIT
TOKEN=budget-bench
echo "[budget] load at start: $(uptime | sed 's/.*load average/load average/')"
start userdir "$S/agile-userdir" --listen 127.0.0.1:0
USERDIR=$ADDR
for cfg in "${configs[@]}"; do
  run=$TMP/$cfg
  mkdir -p "$run"
  start "handler-$cfg" "$HANDLER" --mode deployed --listen 127.0.0.1:0 --store "$run/h.sqlite" --token "$TOKEN"
  handler=$ADDR; handler_pid=$LAST_PID
  env_args=(PERFHAT_ENDPOINT="http://$handler" PERFHAT_TOKEN="$TOKEN" OTEL_SERVICE_NAME=agile-service
            PERFHAT_SAMPLER=full PERFHAT_FILTER=)
  case $cfg in
    # Full tracing exports every 0.2 s so the span rings never overflow (as the overhead
    # benchmark does); the budget runs record few calls and keep the default 5 s interval.
    full|full-*) env_args+=(PERFHAT_EXPORT_INTERVAL_S=0.2) ;;
    disabled) env_args+=(PERFHAT_ENABLED=0) ;;
    budget-*) env_args+=(PERFHAT_BUDGET="0.0${cfg#budget-}" PERFHAT_BUDGET_MODE="$MODE"
                         PERFHAT_BUDGET_STATUS="$run/status.json") ;;
    *) echo "unknown configuration '$cfg'" >&2; exit 2 ;;
  esac
  start "service-$cfg" env "${env_args[@]}" "$S/agile-service" --listen 127.0.0.1:0 --db "$run/a.sqlite" \
    --tcp-nodelay --userdir "http://$USERDIR" --report-max-age-s 3600
  service=$ADDR; service_pid=$LAST_PID
  service_t0=$(date +%s.%N)
  since_start() { echo "$(date +%s.%N) - $service_t0" | bc; }
  # Every plan the run adopted, with its time since the service started: the library rewrites
  # its status file at each plan change (and every 10 windows), so polling it catches each one.
  # compare.py uses it to tell how long each class was traced (probing mode records a class's
  # calls only while the plan traces it).
  poll_pid=
  if [[ $cfg == budget-* ]]; then
    ( while kill -0 "$service_pid" 2>/dev/null; do
        if [ -f "$run/status.json" ] && ! cmp -s "$run/status.json" "$run/.status-last" 2>/dev/null; then
          cp "$run/status.json" "$run/.status-last"
          printf '{"t_s":%s,"status":%s}\n' "$(since_start)" \
            "$(cat "$run/.status-last")" >> "$run/status-history.jsonl"
        fi
        sleep 0.25
      done ) &
    poll_pid=$!
  fi
  load=(--target "http://$service" --shape stationary --quiet --cpu-bound --workers 4 --rate "$RATE")
  echo "warmup $(since_start)" > "$run/phases.txt"
  "$S/agile-workload" "${load[@]}" --duration "$WARMUP_S" --seed 7 2>"$run/warmup.log"
  echo "steady $(since_start)" >> "$run/phases.txt"
  # The collector thread's CPU from the kernel's own accounting over the steady phase (the
  # scheduler's run time in ns, /proc/PID/task/TID/schedstat, of the thread named perfhat-bg
  # against the sum over the process's threads), a third measure beside perf's samples and the
  # library's CPU clock. (utime/stime count 10 ms ticks: a few ticks for this thread.)
  run_ns() { local t bg=0 all=0 ns; for t in /proc/"$service_pid"/task/*; do
               ns=$(cut -d' ' -f1 "$t/schedstat" 2>/dev/null) || continue
               all=$((all + ns))
               [ "$(cat "$t/comm" 2>/dev/null)" != perfhat-bg ] || bg=$((bg + ns))
             done; echo "$bg $all"; }
  run0=$(run_ns)
  perf record -q -e cpu-clock --call-graph dwarf,16384 -F 1000 -p "$service_pid" \
    -o "$run/perf.data" -- sleep "$STEADY_S" >"$run/perf.log" 2>&1 &
  perf_pid=$!
  "$S/agile-workload" "${load[@]}" --duration "$STEADY_S" --seed 8 --report "$run/steady.json" 2>"$run/steady.log"
  run1=$(run_ns)
  echo "$run0 $run1" | awk '$4 > $2 {printf "%.2f %.3f %.3f\n", 100 * ($3 - $1) / ($4 - $2), ($3 - $1) / 1e9, ($4 - $2) / 1e9}' \
    > "$run/collector_proc.txt"
  # The plan as it stood at the end of the steady phase (an idle service re-plans after it).
  [ ! -f "$run/status.json" ] || cp "$run/status.json" "$run/status-steady.json"
  echo "end $(since_start)" >> "$run/phases.txt"
  wait "$perf_pid" || true
  perf script -i "$run/perf.data" -F comm,tid,ip,sym 2>/dev/null > "$run/perf.txt"
  python3 bench/overhead/perf_share.py < "$run/perf.txt" > "$run/perf_share.txt"
  python3 bench/budget/perf_top.py 8 --inner < "$run/perf.txt" > "$run/perf_top.txt"
  [ -n "${BUDGET_KEEP_PERF:-}" ] || rm -f "$run/perf.txt"  # with BUDGET_KEEP: the stacks too
  rm -f "$run/perf.data"
  sleep 1
  kill -TERM "$service_pid"; wait "$service_pid" 2>/dev/null || true
  [ -z "$poll_pid" ] || wait "$poll_pid" 2>/dev/null || true
  sleep 1
  python3 bench/budget/p50s.py "http://$handler" "$TOKEN" "$run/h.sqlite" > "$run/p50.json"
  kill -TERM "$handler_pid"; wait "$handler_pid" 2>/dev/null || true
  [[ $cfg == full* ]] || sed 's/^/[budget]   /' "$run/perf_top.txt"
  [ ! -s "$run/collector_proc.txt" ] ||
    echo "[budget] $cfg: collector thread (perfhat-bg) $(cut -d' ' -f1 "$run/collector_proc.txt") % of the process's run time (/proc schedstat, steady phase)"
  echo "[budget] $cfg: libperfhat share $(cat "$run/perf_share.txt") (% of samples, samples, % with any perfhat:: frame);" \
       "$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["ok"], "requests,", round(r["throughput_per_s"],1), "req/s")' "$run/steady.json")"
done
echo "[budget] load at end: $(uptime | sed 's/.*load average/load average/')"
python3 bench/budget/compare.py "$TMP" "$MIN_CALLS" "${configs[@]}"
