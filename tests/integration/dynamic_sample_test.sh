#!/usr/bin/env bash
# The sample service's never-called functions (issue #24): agile-service exports every call to a
# real perfhat-handler; one minute it serves every GET endpoint, the next minute every endpoint
# but the two CPU-bound reports. GET /v1/dynamic?service=… over the second minute must list as
# never called exactly the functions that ran in the first minute and not in the second (the
# reports' code among them), and over both minutes none.
#
#   tests/integration/dynamic_sample_test.sh BUILD_DIR
set -euo pipefail
BUILD=$(cd "${1:?usage: dynamic_sample_test.sh BUILD_DIR}" && pwd)
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/perfhat-dynamic-sample.XXXXXX")
# shellcheck source=SCRIPTDIR/../../scripts/lib/processes.sh
. "$ROOT/scripts/lib/processes.sh"
cleanup() {
  local rc=$?
  stop_all
  rm -rf "$TMP"
  exit $rc
}
trap cleanup EXIT

start handler "$BUILD/feedback-handler/perfhat-handler" --mode deployed --listen 127.0.0.1:0 \
  --store "$TMP/s.sqlite" --allow-unauthenticated
HANDLER=$ADDR
start userdir "$BUILD/samples/agile-userdir" --listen 127.0.0.1:0
USERDIR=$ADDR
PERFHAT_ENDPOINT=http://$HANDLER PERFHAT_SAMPLER=full PERFHAT_EXPORT=spans \
  PERFHAT_EXPORT_INTERVAL_S=1 OTEL_SERVICE_NAME=agile-dynamic \
  start service "$BUILD/samples/agile-service" --listen 127.0.0.1:0 --db "$TMP/agile.sqlite" \
  --userdir "http://$USERDIR" --db-latency-us 0
SERVICE=$ADDR
SERVICE_PID=$LAST_PID

hit() {  # the GET endpoints; with "all", the CPU-bound reports too
  local p
  for p in /products /backlogs/1 /backlogs/1/tree /iterations/1 /iterations/1/summary \
           /iterations/1/candidates /stories/1 /stories/1/effort /tasks/1 /users/1/timesheet; do
    curl -s -o /dev/null "http://$SERVICE$p"
  done
  if [ "$1" = all ]; then
    curl -s -o /dev/null "http://$SERVICE/iterations/1/burndown"
    curl -s -o /dev/null "http://$SERVICE/backlogs/1/velocity"
  fi
}
minute_start() { date -u -d "@$(( $(date +%s) / 60 * 60 ))" +%Y-%m-%dT%H:%M:%SZ; }

first=$(minute_start)
hit all
# Spans are dated by their start: wait for the next minute (a margin of 2 s past it).
now=$(date +%s)
sleep $(( 60 - now % 60 + 2 ))
second=$(minute_start)
[ "$second" != "$first" ] || { echo "clock did not move to the next minute" >&2; exit 1; }
hit some
kill -TERM "$SERVICE_PID"  # the service flushes its spans on the way out
wait "$SERVICE_PID" 2>/dev/null || true

q() { curl -fsS "http://$HANDLER/v1/dynamic?service=agile-dynamic&from=$1"; }
q "$first" >"$TMP/both.json"
q "$second" >"$TMP/second.json"
curl -fsS "http://$HANDLER/v1/dynamic/graph?format=csv&matrix=vc&step_minutes=1&service=agile-dynamic&from=$first" \
  >"$TMP/vc.csv"
python3 - "$TMP/both.json" "$TMP/second.json" "$TMP/vc.csv" <<'PY'
import csv, json, sys
both, second = (json.load(open(p)) for p in sys.argv[1:3])
rows = list(csv.reader(open(sys.argv[3])))
header, minutes = rows[0][1:], [r for r in rows[1:] if r[0] != "VC*"]
assert len(minutes) == 2, rows
first_vc = {k: float(v) for k, v in zip(header, minutes[0][1:])}
second_vc = {k: float(v) for k, v in zip(header, minutes[1][1:])}
expected = sorted(k for k in header if first_vc[k] > 0 and second_vc[k] == 0)
got = second["never_called"]
assert both["never_called"] == [], both["never_called"]
assert got == expected, f"never called {got}\nexpected {expected}"
reports = [k for k in got if "Report" in k or "burndown" in k.lower() or "velocity" in k.lower()]
assert len(reports) >= 2, got
assert second["called"] > 10 and second["functions"] == second["called"] + len(got), second
print(f"ok: {len(got)} never called in the second minute, {second['called']} called; e.g. {got[:3]}")
PY
