#!/usr/bin/env bash
# The sample service as N replicas (default 6) running the N variants of one release, feeding one
# handler (issue 23), against the same N replicas with every probe on feeding another. Prints,
# for the hottest functions, what a batchGet answers in both runs, then what the editor shows:
# perfhat-lsp's code lens and hover against each handler (bench/plan/variants_editor.py).
#
#   bench/plan/variants_service.sh [BUILD=build]
#     PERFHAT_VARIANTS_N         replicas = variants (default 6)
#     PERFHAT_VARIANTS_REQUESTS  requests per replica (default 400; the same in both runs)
#     PERFHAT_VARIANTS_COVER     variants probing each unit: h_bound = ceil(COVER·|U|/N) (default 2)
#     PERFHAT_VARIANTS_TOP       functions compared in the editor (default 6: the hottest and five)
#     PERFHAT_VARIANTS_KEEP=1    keep the temp dir
# Needs: perfhat-handler, perfhat-plan, perfhat-lsp, agile-service, agile-userdir, agile-workload
# in BUILD (and BUILD/compile_commands.json for the editor's view).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:-build}" && pwd)
N=${PERFHAT_VARIANTS_N:-6}
REQUESTS=${PERFHAT_VARIANTS_REQUESTS:-400}
COVER=${PERFHAT_VARIANTS_COVER:-2}
# shellcheck source=../../scripts/lib/processes.sh
. "$ROOT/scripts/lib/processes.sh"
scratch_dir perfhat-variants PERFHAT_VARIANTS_KEEP

start userdir "$BUILD/samples/agile-userdir" --listen 127.0.0.1:0
USERDIR=$ADDR

# run_fleet NAME HANDLER_ADDR [MANIFEST]: N service processes (one SQLite file each), N workload
# generators with the same seeds and request counts in both runs, then the services stop (and
# flush).
run_fleet() {
  local name=$1 handler=$2 manifest=${3:-} i pids=() addrs=()
  for i in $(seq 0 $((N - 1))); do
    local vars=(PERFHAT_ENDPOINT="http://$handler" PERFHAT_SAMPLER=full PERFHAT_EXPORT=spans
                PERFHAT_EXPORT_INTERVAL_S=2 OTEL_SERVICE_NAME=agile-service
                OTEL_SERVICE_VERSION=1.0.0)
    [ -n "$manifest" ] && vars+=(PERFHAT_VARIANT_MANIFEST="$manifest" PERFHAT_REPLICA="$i")
    start "$name-svc$i" /usr/bin/env "${vars[@]}" "$BUILD/samples/agile-service" --listen 127.0.0.1:0 \
      --db "$TMP/$name-$i.sqlite" --userdir "http://$USERDIR" --threads 2
    pids+=("$LAST_PID")
    addrs+=("$ADDR")
  done
  drive_agile 40 600 "$REQUESTS" "${addrs[@]}"
  stop_each "${pids[@]}"
}


# batchGet KEYS_JSON HANDLER_ADDR -> the answer
batch_get() {
  curl -fsS -X POST -H 'Content-Type: application/json' --data-binary "$1" \
    "http://$2/v1/feedback:batchGet"
}

# ---- 1. every probe on: the reference --------------------------------------------------------
start full-handler "$BUILD/feedback-handler/perfhat-handler" --mode deployed --listen 127.0.0.1:0 \
  --store "$TMP/full.sqlite" --allow-unauthenticated
FULL=$ADDR
echo "full-probe run: $N replicas × $REQUESTS requests, every probe on"
run_fleet full "$FULL"
sleep 1
# The inventory: every function the full run measured, without the request roots (api.cc,
# report_api.cc), which libperfhat always probes (they are the traffic measure).
curl -fsS "http://$FULL/v1/changes?since=0" |
  python3 -c 'import json,sys; print(json.dumps({"keys": json.load(sys.stdin)["keys"]}))' \
  > "$TMP/all_keys.json"
batch_get @"$TMP/all_keys.json" "$FULL" > "$TMP/full.json"
python3 - "$TMP/full.json" "$TMP/units.txt" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
keys = [i["key"] for i in doc["items"]
        if "(" in i["key"] and not i.get("file", "").endswith(("/api.cc", "/report_api.cc"))]
open(sys.argv[2], "w").write("".join(k + "\n" for k in sorted(keys)))
PY
UNITS=$(wc -l < "$TMP/units.txt")
H=$(( (COVER * UNITS + N - 1) / N ))
echo "inventory: $UNITS functions (request roots left out); h_bound $H of $UNITS per variant"

# ---- 2. the release: N variants, one per replica ---------------------------------------------
mkdir -p "$TMP/releases"
"$BUILD/plan/perfhat-plan" variants --units "$TMP/units.txt" --h-bound "$H" --variants "$N" \
  --strategy rb --seed 1 --history "$TMP/releases" --release r1 > /dev/null
start variant-handler "$BUILD/feedback-handler/perfhat-handler" --mode deployed \
  --listen 127.0.0.1:0 --store "$TMP/variants.sqlite" --releases "$TMP/releases" \
  --allow-unauthenticated
VAR=$ADDR
echo "variant run: $N replicas, replica i runs variant i of release r1"
run_fleet var "$VAR" "$TMP/releases/release-r1.json"
sleep 1
batch_get @"$TMP/all_keys.json" "$VAR" > "$TMP/variants.json"

# ---- 3. the editor's numbers, side by side ------------------------------------------------------
python3 - "$TMP/full.json" "$TMP/variants.json" "$TMP/units.txt" <<'PY'
import json, sys
full = {i["key"]: i for i in json.load(open(sys.argv[1]))["items"]}
var_doc = json.load(open(sys.argv[2]))
var = {i["key"]: i for i in var_doc["items"]}
units = set(open(sys.argv[3]).read().split("\n"))
hot = sorted((k for k in full if k in units), key=lambda k: -full[k]["stats"]["count"])[:8]
print("| function | full: calls | variants: calls (observed) | Δ calls | full p50 | variants p50 | Δ p50 | exposure |")
print("|---|---|---|---|---|---|---|---|")
for k in hot:
    f, v = full[k]["stats"], var.get(k, {}).get("stats")
    e = var.get(k, {}).get("exposure")
    if v is None:
        print(f"| `{k}` | {f['count']} | — | | | | | not in the variant run |")
        continue
    dc = (v["count"] - f["count"]) / f["count"] * 100
    dp = (v["p50_ns"] - f["p50_ns"]) / f["p50_ns"] * 100 if f["p50_ns"] else 0
    ex = (f"{e['replicas_probed']} of {e['replicas']} replicas, {e['traffic_share']*100:.0f} % of traffic"
          if e else "none")
    obs = e["observed_count"] if e else v["count"]
    print(f"| `{k}` | {f['count']} | {v['count']} ({obs}) | {dc:+.1f} % | {f['p50_ns']/1e6:.3f} ms "
          f"| {v['p50_ns']/1e6:.3f} ms | {dp:+.1f} % | {ex} |")
print(f"unprobed keys named by the variant handler: {len(var_doc.get('unprobed', []))}")
PY

# ---- 4. what the editor shows: perfhat-lsp (LSP over stdio) against each handler ---------------
echo
python3 "$ROOT/bench/plan/variants_editor.py" "$BUILD" "$TMP/full.json" "$TMP/units.txt" \
  "$FULL" "$VAR" "${PERFHAT_VARIANTS_TOP:-6}"
