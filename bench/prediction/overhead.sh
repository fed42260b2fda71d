#!/usr/bin/env bash
# Monitoring overhead of libperfhat on the sample service: throughput and latency of the same
# saturating workload against the same service, built without probes (none) and instrumented in
# four modes. Each configuration gets a fresh database and a fresh deployed handler; the order
# of configurations is rotated per repetition so drift on a shared machine spreads evenly.
#
#   bench/prediction/overhead.sh [BUILD_DIR] [SECONDS_PER_RUN] [REPETITIONS]
#
# Prints one line per run and a summary table (median throughput per configuration and the
# relative overhead against "none").
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build}
SECONDS_PER_RUN=${2:-20}
REPS=${3:-3}
RATE=${OVERHEAD_RATE:-400}     # far above capacity: the service runs saturated
WORKERS=${OVERHEAD_WORKERS:-16}
S=$BUILD/samples
HANDLER=$BUILD/feedback-handler/perfhat-handler
for bin in "$S/agile-service" "$S/agile-service-bare" "$S/agile-userdir" "$S/agile-workload" "$HANDLER"; do
  [ -x "$bin" ] || { echo "missing $bin" >&2; exit 1; }
done
TMP=$(mktemp -d "${TMPDIR:-/tmp}/perfhat-overhead.XXXXXX")
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$TMP"
}
trap cleanup EXIT

start() {  # start NAME CMD... -> ADDR=host:port, LAST_PID
  local name=$1; shift
  "$@" >"$TMP/$name.log" 2>&1 &
  LAST_PID=$!
  PIDS+=($LAST_PID)
  for _ in $(seq 300); do
    ADDR=$(sed -n 's/.*listening on \(http:\/\/\)\{0,1\}\([0-9.]*:[0-9][0-9]*\).*/\2/p' "$TMP/$name.log" | head -n1)
    [ -n "$ADDR" ] && return 0
    sleep 0.1
  done
  cat "$TMP/$name.log" >&2; exit 1
}

start userdir "$S/agile-userdir" --listen 127.0.0.1:0
USERDIR=$ADDR
TOKEN=overhead-bench
configs=(none full phase1 tigris-adaptive)
: > "$TMP/results.tsv"
for rep in $(seq "$REPS"); do
  for i in "${!configs[@]}"; do
    cfg=${configs[$(( (i + rep - 1) % ${#configs[@]} ))]}
    run=$TMP/$cfg-$rep
    mkdir -p "$run"
    start "handler-$cfg-$rep" "$HANDLER" --mode deployed --listen 127.0.0.1:0 --store "$run/h.sqlite" --token "$TOKEN"
    handler=$ADDR; handler_pid=$LAST_PID
    env_args=(PERFHAT_ENDPOINT="http://$handler" PERFHAT_TOKEN="$TOKEN" OTEL_SERVICE_NAME=agile-service)
    case $cfg in
      none) bin=$S/agile-service-bare ;;
      full) bin=$S/agile-service; env_args+=(PERFHAT_SAMPLER=full PERFHAT_FILTER=) ;;
      # Phase 1 only: every probe keeps its cheap estimators, no span is recorded or exported.
      phase1) bin=$S/agile-service; env_args+=(PERFHAT_SAMPLER=none PERFHAT_FILTER=) ;;
      # Tigris picks what (the frequent or expensive functions), the adaptive sampler how much.
      tigris-adaptive) bin=$S/agile-service; env_args+=(PERFHAT_SAMPLER=adaptive
                         "PERFHAT_FILTER=more frequent ∪ most expensive" PERFHAT_CYCLE_S=5) ;;
    esac
    start "service-$cfg-$rep" env "${env_args[@]}" "$bin" --listen 127.0.0.1:0 --db "$run/a.sqlite" \
      --userdir "http://$USERDIR"
    service=$ADDR; service_pid=$LAST_PID
    "$S/agile-workload" --target "http://$service" --shape stationary --rate "$RATE" \
      --workers "$WORKERS" --duration "$SECONDS_PER_RUN" --report "$run/report.json" --quiet \
      2>"$run/workload.log"
    kill -TERM "$service_pid" "$handler_pid"; wait "$service_pid" "$handler_pid" 2>/dev/null || true
    python3 - "$cfg" "$rep" "$run/report.json" >> "$TMP/results.tsv" <<'PY'
import json, sys
cfg, rep, path = sys.argv[1:]
r = json.load(open(path))
print(f"{cfg}\t{rep}\t{r['throughput_per_s']:.2f}\t{r['errors']}")
PY
    tail -n1 "$TMP/results.tsv" | awk -F'\t' '{printf "run %s #%s: %s req/s, %s errors\n", $1, $2, $3, $4}'
  done
done
python3 - "$TMP/results.tsv" <<'PY'
import statistics, sys
rows = [l.split("\t") for l in open(sys.argv[1]).read().splitlines()]
by = {}
for cfg, rep, tput, err in rows:
    by.setdefault(cfg, []).append(float(tput))
base = statistics.median(by["none"])
print("\n| configuration | runs | median throughput (req/s) | overhead vs none |")
print("|---|---|---|---|")
for cfg in ["none", "full", "phase1", "tigris-adaptive"]:
    if cfg not in by: continue
    m = statistics.median(by[cfg])
    print(f"| {cfg} | {len(by[cfg])} | {m:.1f} | {100 * (base - m) / base:+.1f} % |")
PY
