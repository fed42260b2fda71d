#!/usr/bin/env bash
# Prediction accuracy: what perfhat-lsp predicts for a changed function before the change is
# deployed, against what the changed service measures after it is deployed.
#
#   bench/prediction/accuracy.sh BUILD_DIR PATCH FILE FUNCTION KEY [PATCH FILE FUNCTION KEY]...
#
#   PATCH     a patch of samples/ (p1, e.g. samples/tasks/T4/reference.patch)
#   FILE      the changed source file (e.g. samples/agile/iteration_service.cc)
#   FUNCTION  the changed function's name as it appears in its definition (e.g. iterationMetrics)
#   KEY       its function key in the feedback (e.g. "agile::IterationService::iterationMetrics(int) const")
#
# 1. baseline: deployed handler + the unmodified instrumented service + a fixed workload
#    (stationary, fixed seed, ACCURACY_LOAD_S seconds, PERFHAT_SAMPLER=full);
# 2. per change: `perfhat-lsp --check` on a patched copy against the baseline data → predicted
#    p50 of FUNCTION and whether a regression warning is shown;
# 3. per change: the patched service is built (one incremental build tree, reused across runs),
#    deployed with a fresh handler and the same workload → measured p50 and mean of KEY;
# 4. prints a Markdown table: predicted / measured / absolute percentage error, flagged or not,
#    and the median APE.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUILD=${1:?usage: accuracy.sh BUILD_DIR PATCH FILE FUNCTION KEY ...}
shift
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
LOAD_S=${ACCURACY_LOAD_S:-40}
RATE=${ACCURACY_RATE:-20}
CACHE=${ACCURACY_CACHE:-${TMPDIR:-/tmp}/perfhat-accuracy}  # patched tree + build (reused)
TREE=${ACCURACY_TREE:-$CACHE/tree}
PBUILD=${ACCURACY_BUILD:-$CACHE/build}
HANDLER=$BUILD/feedback-handler/perfhat-handler
LSP=$BUILD/server/perfhat-lsp
S=$BUILD/samples
TMP=$(mktemp -d "${TMPDIR:-/tmp}/perfhat-accuracy-run.XXXXXX")
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

# deploy NAME SERVICE_BINARY -> HANDLER_ADDR: a fresh handler holding one workload run's data.
deploy() {
  local name=$1 bin=$2
  start "handler-$name" "$HANDLER" --mode deployed --listen 127.0.0.1:0 \
    --store "$TMP/$name.sqlite" --allow-unauthenticated
  HANDLER_ADDR=$ADDR
  PERFHAT_ENDPOINT=http://$HANDLER_ADDR PERFHAT_SAMPLER=full PERFHAT_EXPORT_INTERVAL_S=2 \
    OTEL_SERVICE_NAME=agile-service start "service-$name" "$bin" --listen 127.0.0.1:0 \
    --db "$TMP/$name-agile.sqlite" --userdir "http://$USERDIR"
  local service=$ADDR service_pid=$LAST_PID
  "$S/agile-workload" --target "http://$service" --shape stationary --rate "$RATE" --workers 4 \
    --seed 11 --duration "$LOAD_S" --quiet 2>"$TMP/workload-$name.log"
  kill -TERM "$service_pid"; wait "$service_pid" 2>/dev/null || true
}

stats_of() {  # stats_of HANDLER_ADDR KEY -> "p50_ms mean_ms count"
  curl -fsS -X POST "http://$1/v1/feedback:batchGet" -H 'Content-Type: application/json' \
    --data-binary "$(python3 -c 'import json,sys; print(json.dumps({"keys":[sys.argv[1]]}))' "$2")" |
    python3 -c '
import json, sys
items = json.load(sys.stdin).get("items", [])
s = items[0]["stats"] if items and items[0].get("stats") else None
print("%.3f %.3f %d" % (s["p50_ns"] / 1e6, s["mean_ns"] / 1e6, s["count"]) if s else "nan nan 0")'
}

echo "[accuracy] baseline run (${LOAD_S}s, ${RATE} req/s)" >&2
deploy baseline "$S/agile-service"
BASELINE=$HANDLER_ADDR

# The patched tree: samples/ copied (only changed files rewritten, so the build stays
# incremental), everything else linked to the checkout.
mkdir -p "$TREE"
for entry in "$ROOT"/*; do
  name=$(basename "$entry")
  case "$name" in samples|build|build-*) continue ;; esac
  [ -e "$TREE/$name" ] || ln -s "$entry" "$TREE/$name"
done

: > "$TMP/rows.tsv"
while [ $# -ge 4 ]; do
  patch_file=$1 file=$2 function=$3 key=$4
  shift 4
  change=$(basename "$(dirname "$patch_file")")/$(basename "$patch_file" .patch)
  echo "[accuracy] $change" >&2
  rm -rf "$TMP/pristine"; cp -r "$ROOT/samples" "$TMP/pristine"
  (cd "$TMP" && mkdir -p p && rm -rf p/samples && cp -r pristine p/samples &&
   cd p && patch -s -p1 < "$ROOT/$patch_file")
  # Rewrite only the files that differ, so the patched build stays incremental.
  (cd "$TMP/p/samples" && find . -type f) | while read -r f; do
    cmp -s "$TMP/p/samples/$f" "$TREE/samples/$f" 2>/dev/null ||
      { mkdir -p "$(dirname "$TREE/samples/$f")"; cp "$TMP/p/samples/$f" "$TREE/samples/$f"; }
  done

  # Predicted, from the baseline data, before deploying.
  mkdir -p "$CACHE/compile-db"
  sed "s#$ROOT\([/ \"]\)#$TREE\1#g" "$BUILD/compile_commands.json" \
    > "$CACHE/compile-db/compile_commands.json"
  "$LSP" --check "$TREE/$file" --handler "http://$BASELINE" \
    --compile-commands "$CACHE/compile-db" --no-color > "$TMP/check.txt" 2>/dev/null
  predicted=$(python3 - "$TMP/check.txt" "$function" <<'PY'
import re, sys
text = open(sys.argv[1]).read().splitlines()
unit = {"ns": 1e-6, "µs": 1e-3, "us": 1e-3, "ms": 1.0, "s": 1e3}
for line in text:
    # The definition's first line (qualified name, as the sample's .cc files define them).
    if re.search(r"::%s\(" % re.escape(sys.argv[2]), line) and "⏱" in line:
        m = re.search(r"~?⏱ ([0-9.]+) (ns|µs|us|ms|s)\b", line)
        if m:
            print("%.3f" % (float(m.group(1)) * unit[m.group(2)])); break
else:
    print("nan")
PY
)
  flagged=$(grep -q "warning perfhat.regression" "$TMP/check.txt" && echo yes || echo no)

  # Measured, after deploying the change.
  cmake -S "$TREE" -B "$PBUILD" -G Ninja -DPERFHAT_BUILD_BENCHMARKS=OFF >/dev/null
  cmake --build "$PBUILD" --target agile-service -j2 >/dev/null
  deploy "$(basename "$patch_file" .patch)-$RANDOM" "$PBUILD/samples/agile-service"
  read -r measured_p50 measured_mean count <<<"$(stats_of "$HANDLER_ADDR" "$key")"
  read -r before_p50 _ _ <<<"$(stats_of "$BASELINE" "$key")"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$change" "$function" "$before_p50" "$predicted" \
    "$measured_p50" "$measured_mean" "$count" "$flagged" >> "$TMP/rows.tsv"
  tail -n1 "$TMP/rows.tsv" >&2
done

python3 - "$TMP/rows.tsv" <<'PY'
import math, statistics, sys
rows = [l.split("\t") for l in open(sys.argv[1]).read().splitlines() if l]
print("| change | function | before p50 (ms) | predicted p50 (ms) | measured p50 (ms) | measured mean (ms) | APE | flagged |")
print("|---|---|---|---|---|---|---|---|")
apes = []
for change, fn, before, pred, meas, mean, count, flagged in rows:
    pred, meas = float(pred), float(meas)
    ape = abs(pred - meas) / meas * 100 if meas > 0 and not math.isnan(pred) else float("nan")
    if not math.isnan(ape): apes.append(ape)
    print(f"| {change} | {fn} | {float(before):.2f} | {pred:.2f} | {meas:.2f} | {float(mean):.2f} | {ape:.0f} % | {flagged} |")
if apes:
    print(f"\nmedian APE over {len(apes)} changes: {statistics.median(apes):.0f} %")
PY
