#!/usr/bin/env bash
# perfhat-fetch on a real code base: this project itself (its compile database, every C++
# translation unit of the build), against a deployed handler that holds production data for the
# sample service's functions, which are part of the project.
#
#   bench/fetch/project_fetch.sh [BUILD_DIR] [JOBS]
#
# 1. starts a deployed handler (bearer token), the user directory and the instrumented sample
#    service, and drives the service for FETCH_LOAD_S seconds (default 15) so the handler holds
#    real data for the functions under samples/agile;
# 2. runs `perfhat-fetch --compile-commands BUILD_DIR --store LOCAL.sqlite` (parse every
#    translation unit with libclang, batchGet every key, pull the sketches into a local store)
#    under /usr/bin/time, and prints its summary with wall and CPU time and the machine's load.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUILD=${1:-build}
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
JOBS=${2:-$(nproc)}
LOAD_S=${FETCH_LOAD_S:-15}
S=$BUILD/samples
for bin in "$BUILD/feedback-handler/perfhat-handler" "$BUILD/feedback-handler/perfhat-fetch" \
           "$S/agile-service" "$S/agile-userdir" "$S/agile-workload"; do
  [ -x "$bin" ] || { echo "missing $bin (build it first)" >&2; exit 1; }
done
[ -f "$BUILD/compile_commands.json" ] || { echo "no $BUILD/compile_commands.json" >&2; exit 1; }

TMP=$(mktemp -d "${TMPDIR:-/tmp}/perfhat-fetch-bench.XXXXXX")
# shellcheck source=../../scripts/lib/processes.sh
. "$ROOT/scripts/lib/processes.sh"
trap 'stop_all; rm -rf "$TMP"' EXIT

TOKEN=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
start handler "$BUILD/feedback-handler/perfhat-handler" --mode deployed --listen 127.0.0.1:0 \
  --store "$TMP/deployed.sqlite" --token "$TOKEN"
HANDLER=$ADDR
start userdir "$S/agile-userdir" --listen 127.0.0.1:0
USERDIR=$ADDR
PERFHAT_ENDPOINT=http://$HANDLER PERFHAT_TOKEN=$TOKEN PERFHAT_SAMPLER=full \
  PERFHAT_EXPORT_INTERVAL_S=2 OTEL_SERVICE_NAME=agile-service \
  start service "$S/agile-service" --listen 127.0.0.1:0 --db "$TMP/agile.sqlite" \
  --userdir "http://$USERDIR"
SERVICE_PID=$LAST_PID
echo "driving the sample service for ${LOAD_S}s so the handler holds production data"
"$S/agile-workload" --target "http://$ADDR" --shape stationary --rate 20 --workers 4 --seed 7 \
  --duration "$LOAD_S" --quiet
kill -TERM "$SERVICE_PID"; wait "$SERVICE_PID" 2>/dev/null || true  # flushes its spans

TUS=$(python3 -c 'import json,sys; print(len({e["file"] for e in json.load(open(sys.argv[1]))}))' \
  "$BUILD/compile_commands.json")
echo "perfhat-fetch over $TUS translation units with $JOBS parsers (load: $(cut -d' ' -f1-3 /proc/loadavg))"
/usr/bin/time -f 'process: %e s wall, %U s user, %S s sys, %M kB max RSS' \
  "$BUILD/feedback-handler/perfhat-fetch" --handler "http://$HANDLER" --token "$TOKEN" \
  --compile-commands "$BUILD" --store "$TMP/local.sqlite" --jobs "$JOBS" 2>"$TMP/fetch.err" |
  tee "$TMP/fetch.out"
grep -v '^parse \|^fetch ' "$TMP/fetch.err" | tail -n 20 >&2 || true
echo "load afterwards: $(cut -d' ' -f1-3 /proc/loadavg)"
