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
#
# ACCURACY_KEEP=DIR keeps the baseline store, every change's `--check` output (p50 and mean
# views, with the debug profile's derivations) and the measured rows in DIR.
# ACCURACY_REUSE=DIR (a DIR kept by an earlier run) re-predicts every change against that run's
# baseline store and scores it against that run's measurements, without running the workload
# again: for iterating on the analysis. The table then says the measurements were reused.
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
LSP=${ACCURACY_LSP:-$BUILD/server/perfhat-lsp}  # another analysis to compare, e.g. an older build
S=$BUILD/samples
TMP=$(mktemp -d "${TMPDIR:-/tmp}/perfhat-accuracy-run.XXXXXX")
# shellcheck source=../../scripts/lib/processes.sh
. "$ROOT/scripts/lib/processes.sh"
trap 'stop_all; rm -rf "$TMP"' EXIT

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

KEEP=${ACCURACY_KEEP:-}
REUSE=${ACCURACY_REUSE:-}
[ -n "$KEEP" ] && mkdir -p "$KEEP"
if [ -n "$REUSE" ]; then
  [ -f "$REUSE/baseline.sqlite" ] && [ -f "$REUSE/rows.tsv" ] ||
    { echo "accuracy.sh: $REUSE has no baseline.sqlite / rows.tsv" >&2; exit 2; }
  echo "[accuracy] reusing the baseline store and measurements of $REUSE" >&2
  cp "$REUSE/baseline.sqlite" "$TMP/baseline.sqlite"
  start handler-baseline "$HANDLER" --mode deployed --listen 127.0.0.1:0 \
    --store "$TMP/baseline.sqlite" --allow-unauthenticated --range-hours 8760
  BASELINE=$ADDR
else
  echo "[accuracy] baseline run (${LOAD_S}s, ${RATE} req/s)" >&2
  deploy baseline "$S/agile-service"
  BASELINE=$HANDLER_ADDR
  sleep 3  # the last export
  # A misspelled KEY would only show after every change was built and run: check them now.
  # (These reads also make the handler write what it holds behind: the backup below has it.)
  for ((i = 4; i <= $#; i += 4)); do
    read -r _ _ n <<<"$(stats_of "$BASELINE" "${!i}")"
    [ "$n" -gt 0 ] || { echo "accuracy.sh: no baseline data for key '${!i}'" >&2; exit 2; }
  done
  [ -n "$KEEP" ] && sqlite3 "$TMP/baseline.sqlite" ".backup '$KEEP/baseline.sqlite'"
fi

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
  # The function's hint shows the configured statistic: one run per statistic.
  slug=$(basename "$patch_file" .patch)
  [ "$slug" = reference ] && slug=$(basename "$(dirname "$patch_file")")
  predicted=()
  for stat in p50 mean; do
    printf '{"features": {"main_statistic": "%s"}}\n' "$stat" > "$TREE/.perfhat.json"
    "$LSP" --check "$TREE/$file" --handler "http://$BASELINE" --profile debug \
      --compile-commands "$CACHE/compile-db" --no-color > "$TMP/check-$stat.txt" 2>/dev/null
    predicted+=("$(python3 - "$TMP/check-$stat.txt" "$function" <<'PY'
import re, sys
text = open(sys.argv[1]).read().splitlines()
unit = {"ns": 1e-6, "µs": 1e-3, "us": 1e-3, "ms": 1.0, "s": 1e3}
for i, line in enumerate(text):
    # The definition's first line (qualified name, as the sample's .cc files define them); the
    # hint may sit on the signature's continuation line.
    if re.search(r"::%s\(" % re.escape(sys.argv[2]), line) and not line.lstrip().startswith("//"):
        for l in text[i:i + 3]:
            m = re.search(r"~?⏱ ([0-9.]+) (ns|µs|us|ms|s)\b", l)
            if m:
                print("%.3f" % (float(m.group(1)) * unit[m.group(2)])); break
        else:
            continue
        break
else:
    print("nan")
PY
)")
    [ -n "$KEEP" ] && cp "$TMP/check-$stat.txt" "$KEEP/check-$slug-$stat.txt"
  done
  rm -f "$TREE/.perfhat.json"
  flagged=$(grep -q "warning perfhat.regression" "$TMP/check-p50.txt" && echo yes || echo no)

  # Measured, after deploying the change.
  if [ -n "$REUSE" ]; then
    read -r before_p50 before_mean measured_p50 measured_mean count <<<"$(awk -F'\t' -v c="$change" \
      '$1 == c { print $3, $4, $7, $8, $9 }' "$REUSE/rows.tsv")"
    [ -n "${count:-}" ] || { echo "accuracy.sh: no measurement of $change in $REUSE" >&2; exit 2; }
  else
    cmake -S "$TREE" -B "$PBUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DPERFHAT_BUILD_BENCHMARKS=OFF -DPERFHAT_BUILD_TESTS=OFF >/dev/null
    cmake --build "$PBUILD" --target agile-service -j2 >/dev/null
    deploy "$slug-$RANDOM" "$PBUILD/samples/agile-service"
    sleep 3  # the last export
    read -r measured_p50 measured_mean count <<<"$(stats_of "$HANDLER_ADDR" "$key")"
    read -r before_p50 before_mean _ <<<"$(stats_of "$BASELINE" "$key")"
  fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$change" "$function" "$before_p50" \
    "$before_mean" "${predicted[0]}" "${predicted[1]}" "$measured_p50" "$measured_mean" "$count" \
    "$flagged" >> "$TMP/rows.tsv"
  tail -n1 "$TMP/rows.tsv" >&2
done

[ -n "$KEEP" ] && cp "$TMP/rows.tsv" "$KEEP/rows.tsv"
[ -n "$REUSE" ] && echo "(measurements reused from $REUSE; predictions recomputed)"
python3 - "$TMP/rows.tsv" <<'PY'
import math, statistics, sys
rows = [l.split("\t") for l in open(sys.argv[1]).read().splitlines() if l]
def ape(pred, meas):
    pred, meas = float(pred), float(meas)
    return abs(pred - meas) / meas * 100 if meas > 0 and not math.isnan(pred) else float("nan")
print("| change | function | before p50 / mean (ms) | predicted p50 / mean (ms) | measured p50 / mean (ms) | APE p50 / mean | flagged |")
print("|---|---|---|---|---|---|---|")
apes = {"p50": [], "mean": []}
for change, fn, bp50, bmean, pp50, pmean, mp50, mmean, count, flagged in rows:
    a50, amean = ape(pp50, mp50), ape(pmean, mmean)
    for k, a in (("p50", a50), ("mean", amean)):
        if not math.isnan(a): apes[k].append(a)
    f = lambda v: "%.2f" % float(v)
    print(f"| {change} | {fn} | {f(bp50)} / {f(bmean)} | {f(pp50)} / {f(pmean)} | {f(mp50)} / {f(mmean)} | {a50:.0f} % / {amean:.0f} % | {flagged} |")
for k, v in apes.items():
    if v: print(f"\nmedian APE ({k}) over {len(v)} changes: {statistics.median(v):.0f} %")
PY
