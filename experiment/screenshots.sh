#!/usr/bin/env bash
# Screenshots of the experiment's two web pages for the README (docs/screenshots/):
#   experiment-report.png     the HTML report of samples/study (illustrative measurements)
#   experiment-dashboard.png  the control group's dashboard on a handler holding spans shaped
#                             like samples/datasets/agile.feedback.json (each function's mean,
#                             with a drift over the last hour, so the time chart has a shape)
# Usage: experiment/screenshots.sh BUILD_DIR [OUT_DIR]   (needs /usr/bin/chromium, python3)
set -euo pipefail
BUILD=$(realpath "${1:?usage: screenshots.sh BUILD_DIR [OUT_DIR]}")
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=$(realpath -m "${2:-$ROOT/docs/screenshots}")
EXP=$BUILD/experiment/perfhat-experiment
HANDLER=$BUILD/feedback-handler/perfhat-handler
CHROMIUM=${PERFHAT_CHROMIUM:-/usr/bin/chromium}
mkdir -p "$OUT"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/perfhat-exp-shots.XXXXXX")
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$TMP"; }
trap cleanup EXIT

shot() {  # URL FILE WIDTH HEIGHT
  "$CHROMIUM" --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$TMP/chrome" \
    --virtual-time-budget=15000 --window-size="$3,$4" --screenshot="$2" "$1" 2>/dev/null
  [ -s "$2" ] || { echo "no screenshot $2" >&2; exit 1; }
  echo "wrote $2"
}

"$EXP" report --study "$ROOT/samples/study/study.json" --seed 1 \
  --csv "$ROOT/samples/study/example-measurements.csv" --out "$TMP/report" >/dev/null
shot "file://$TMP/report/report.html" "$OUT/experiment-report.png" 1100 1400

"$HANDLER" --mode deployed --listen 127.0.0.1:0 --store "$TMP/h.sqlite" --allow-unauthenticated \
  2>"$TMP/handler.log" &
pids+=($!)
for _ in $(seq 100); do grep -q "listening on" "$TMP/handler.log" && break; sleep 0.1; done
HURL="http://$(grep -o 'listening on [0-9.:]*' "$TMP/handler.log" | cut -d' ' -f3)"
python3 - "$ROOT/samples/datasets/agile.feedback.json" "$HURL" <<'PY'
import json, math, random, sys, time, urllib.request
items = json.load(open(sys.argv[1]))["items"]
rng, now, spans = random.Random(3), time.time_ns(), []
for item in items:
    mean = item["stats"]["mean_ns"]
    for minute in range(60):
        drift = 1 + 0.3 * math.sin(minute / 9 + len(item["key"]))
        for _ in range(3):
            start = now - (60 - minute) * 60_000_000_000 + rng.randrange(50_000_000_000)
            spans.append({"traceId": "%032x" % rng.getrandbits(128),
                          "spanId": "%016x" % (rng.getrandbits(63) | 1), "name": "op",
                          "startTimeUnixNano": str(start),
                          "endTimeUnixNano": str(start + int(mean * drift * rng.lognormvariate(0, 0.2))),
                          "attributes": [{"key": "code.function.name",
                                          "value": {"stringValue": item["key"]}}]})
body = {"resourceSpans": [{"resource": {"attributes": [
    {"key": "service.name", "value": {"stringValue": "agile"}}]},
    "scopeSpans": [{"spans": spans}]}]}
req = urllib.request.Request(sys.argv[2] + "/v1/traces", json.dumps(body).encode(),
                             {"Content-Type": "application/json"})
urllib.request.urlopen(req).read()
PY
"$EXP" dashboard --handler "$HURL" --listen 127.0.0.1:0 >"$TMP/dash.log" &
pids+=($!)
for _ in $(seq 100); do grep -q "dashboard on" "$TMP/dash.log" && break; sleep 0.1; done
DURL=$(grep -o 'http://[0-9.:]*/' "$TMP/dash.log" | head -1)
shot "${DURL}?minutes=60&q=Service::" "$OUT/experiment-dashboard.png" 1280 800
