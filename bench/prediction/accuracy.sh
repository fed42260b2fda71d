#!/usr/bin/env bash
# Prediction accuracy: what perfhat-lsp predicts for a changed function before the change is
# deployed, against what the changed service measures after it is deployed.
#
#   bench/prediction/accuracy.sh BUILD_DIR --manifest FILE [--set dev|eval|heldout|heldout2|heldout3|heldout4|heldout5|all] [--only C1,C2,...]
#   bench/prediction/accuracy.sh BUILD_DIR PATCH FILE FUNCTION KEY [PATCH FILE FUNCTION KEY]...
#
#   --manifest  bench/prediction/changes.tsv (columns change, set, patch, file, function, key,
#               category, description); --set picks the development set, the evaluation set,
#               the held-out sets written after both had been looked at (heldout: c43-c61,
#               measured once and since looked at; heldout2: c62-c76, measured once and since looked at;
#               heldout3: c77-c91, measured once and since looked at; heldout4: c92-c102, measured once and since looked at; heldout5: c103-c111), or all (default), --only a
#               comma-separated list of change ids (e.g. --only c10,c22)
#   PATCH       a patch of samples/ (p1, e.g. samples/tasks/T4/reference.patch)
#   FILE        the changed source file (e.g. samples/agile/iteration_service.cc)
#   FUNCTION    the changed function's name as it appears in its definition (e.g. iterationMetrics)
#   KEY         its function key in the feedback (e.g. "agile::IterationService::iterationMetrics(int) const")
#
# 0. the workspace: $TREE (ACCURACY_TREE) is a git repository whose one commit is the unmodified
#    samples/ plus links to the rest of the checkout: the revision production runs. Each change
#    is applied on top as an uncommitted edit, as in a developer's working copy, so the language
#    server can read the deployed text (`git show REV:samples/...`) and diff the working file
#    against it;
# 1. baseline: deployed handler + the unmodified instrumented service, deployed with
#    PERFHAT_SERVICE_VERSION=REV (the resource's service.version; the handler keeps it in each
#    item's `versions`) + a fixed workload (stationary, fixed seed, ACCURACY_LOAD_S seconds,
#    PERFHAT_SAMPLER=full);
# 2. per change: `perfhat-lsp --check` on the changed file in $TREE (run from the file's
#    directory, so a git lookup from there finds $TREE's repository) against the baseline data →
#    predicted p50 (and interval, when the hint shows one) of FUNCTION, and whether a regression
#    warning (`warning perfhat.regression`) or an improvement (`information perfhat.improvement`)
#    is shown;
# 3. per change: the patched service is built (one incremental build tree, reused across runs),
#    deployed with a fresh handler and the same workload → measured p50 and mean of KEY;
# 4. prints Markdown tables per set (dev, eval, heldout, heldout2, heldout3, heldout4, heldout5) and a summary over each set and all
#    (bench/prediction/report.py): APE, flagged direction against the measured change, whether
#    the predicted interval contains the measured p50.
#
# ACCURACY_KEEP=DIR keeps the baseline store, the deployed revision (DIR/revision, and the
# workspace repository as DIR/baseline.bundle), every change's `--check` output (p50 and mean
# views, with the debug profile's derivations) and the measured rows in DIR.
# ACCURACY_REUSE=DIR (a DIR kept by an earlier run) re-predicts every change against that run's
# baseline store and scores it against that run's measurements, without running the workload
# again: for iterating on the analysis. The workspace is rebuilt from DIR/baseline.bundle, so the
# revision named in the store is the one in the workspace. The table then says the measurements
# were reused. Predictions use `--check --index` (the workspace index, which the editor's server
# runs by default: analysis.index.enabled); ACCURACY_INDEX=0 predicts with the changed file
# analysed alone, as every figure in bench/README.md before 2026-11-26 s34 was made.
# ACCURACY_BASELINE_ONLY=1 (with ACCURACY_KEEP) runs and keeps the baseline and stops there.
# ACCURACY_PREDICT_ONLY=1 predicts every change and builds or measures none: for comparing two
# analyses on the same data (bench/prediction/same_predictions.sh). It writes predictions.tsv
# (the measured columns empty) instead of rows.tsv, so a kept DIR can serve as ACCURACY_REUSE for
# another predict-only run but never as measurements; the output is that table, not the report.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUILD=${1:?usage: accuracy.sh BUILD_DIR (--manifest FILE [--set S] [--only IDS] | PATCH FILE FUNCTION KEY ...)}
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
HERE=$ROOT/bench/prediction
TMP=$(mktemp -d "${TMPDIR:-/tmp}/perfhat-accuracy-run.XXXXXX")
# shellcheck source=../../scripts/lib/processes.sh
. "$ROOT/scripts/lib/processes.sh"
trap 'stop_all; rm -rf "$TMP"' EXIT

# The changes, one per line: change, set, patch, file, function, key, category.
CHANGES=$TMP/changes.tsv
: > "$CHANGES"
if [ "${1:-}" = --manifest ]; then
  manifest=${2:?--manifest needs a file}
  shift 2
  set_name=all only=
  while [ $# -gt 0 ]; do
    case "$1" in
      --set) set_name=${2:?--set needs dev, eval, heldout, heldout2, heldout3, heldout4, heldout5 or all}; shift 2 ;;
      --only) only=${2:?--only needs change ids}; shift 2 ;;
      *) echo "accuracy.sh: unknown argument '$1'" >&2; exit 2 ;;
    esac
  done
  case "$set_name" in dev|eval|heldout|heldout2|heldout3|heldout4|heldout5|all) ;; *) echo "accuracy.sh: --set dev, eval, heldout, heldout2, heldout3, heldout4, heldout5 or all" >&2; exit 2 ;; esac
  awk -F'\t' -v s="$set_name" -v only=",$only," 'NR > 1 && (s == "all" || $2 == s) &&
      (only == ",," || index(only, "," $1 ",")) { print $1 "\t" $2 "\t" $3 "\t" $4 "\t" $5 "\t" $6 "\t" $7 }' \
    "$manifest" > "$CHANGES"
  [ -s "$CHANGES" ] || { echo "accuracy.sh: no change of $manifest matches" >&2; exit 2; }
else
  [ $# -ge 4 ] && [ $(($# % 4)) -eq 0 ] || { echo "accuracy.sh: give PATCH FILE FUNCTION KEY quadruples" >&2; exit 2; }
  while [ $# -ge 4 ]; do
    slug=$(basename "$1" .patch)
    [ "$slug" = reference ] && slug=$(basename "$(dirname "$1")")
    printf '%s\t-\t%s\t%s\t%s\t%s\t-\n' "$slug" "$1" "$2" "$3" "$4" >> "$CHANGES"
    shift 4
  done
fi

start userdir "$S/agile-userdir" --listen 127.0.0.1:0
USERDIR=$ADDR

# deploy NAME SERVICE_BINARY [VERSION] -> HANDLER_ADDR: a fresh handler holding one workload
# run's data; VERSION becomes the service's service.version.
deploy() {
  local name=$1 bin=$2 version=${3:-}
  start "handler-$name" "$HANDLER" --mode deployed --listen 127.0.0.1:0 \
    --store "$TMP/$name.sqlite" --allow-unauthenticated
  HANDLER_ADDR=$ADDR
  PERFHAT_SERVICE_VERSION=$version \
    PERFHAT_ENDPOINT=http://$HANDLER_ADDR PERFHAT_SAMPLER=full PERFHAT_EXPORT_INTERVAL_S=2 \
    OTEL_SERVICE_NAME=agile-service start "service-$name" "$bin" --listen 127.0.0.1:0 \
    --db "$TMP/$name-agile.sqlite" --userdir "http://$USERDIR"
  local service=$ADDR service_pid=$LAST_PID
  "$S/agile-workload" --target "http://$service" --shape stationary --rate "$RATE" --workers 4 \
    --seed 11 --duration "$LOAD_S" --quiet 2>"$TMP/workload-$name.log"
  kill -TERM "$service_pid"; wait "$service_pid" 2>/dev/null || true
}

batch_get() {  # batch_get HANDLER_ADDR KEY -> the batchGet response
  curl -fsS -X POST "http://$1/v1/feedback:batchGet" -H 'Content-Type: application/json' \
    --data-binary "$(python3 -c 'import json,sys; print(json.dumps({"keys":[sys.argv[1]]}))' "$2")"
}

stats_of() {  # stats_of HANDLER_ADDR KEY -> "p50_ms mean_ms count"
  batch_get "$1" "$2" | python3 -c '
import json, sys
items = json.load(sys.stdin).get("items", [])
s = items[0]["stats"] if items and items[0].get("stats") else None
print("%.3f %.3f %d" % (s["p50_ns"] / 1e6, s["mean_ns"] / 1e6, s["count"]) if s else "nan nan 0")'
}

# The workspace: links to the rest of the checkout, samples/ copied (only files that differ are
# rewritten, so the patched build stays incremental), one commit of both. Identity and dates are
# fixed: the same samples and links give the same revision on every run.
GIT=(git -C "$TREE" -c init.defaultBranch=deployed -c commit.gpgsign=false -c core.hooksPath=/dev/null)
export GIT_AUTHOR_NAME=perfhat-accuracy GIT_AUTHOR_EMAIL=accuracy@perfhat.invalid \
  GIT_COMMITTER_NAME=perfhat-accuracy GIT_COMMITTER_EMAIL=accuracy@perfhat.invalid \
  GIT_AUTHOR_DATE=2026-01-01T00:00:00Z GIT_COMMITTER_DATE=2026-01-01T00:00:00Z
link_checkout() {
  local entry name
  for entry in "$ROOT"/*; do
    name=$(basename "$entry")
    case "$name" in samples|build|build-*) continue ;; esac
    if [ -L "$TREE/$name" ] && [ "$(readlink "$TREE/$name")" != "$entry" ]; then rm "$TREE/$name"; fi
    [ -e "$TREE/$name" ] || [ -L "$TREE/$name" ] || ln -s "$entry" "$TREE/$name"
  done
}
sync_samples() {  # the checkout's samples/ into $TREE/samples, rewriting only what differs
  local f
  mkdir -p "$TREE/samples"
  (cd "$ROOT/samples" && find . -type f) | while read -r f; do
    cmp -s "$ROOT/samples/$f" "$TREE/samples/$f" 2>/dev/null ||
      { mkdir -p "$(dirname "$TREE/samples/$f")"; cp "$ROOT/samples/$f" "$TREE/samples/$f"; }
  done
  (cd "$TREE/samples" && find . -type f) | while read -r f; do
    [ -e "$ROOT/samples/$f" ] || rm -f "$TREE/samples/$f"
  done
}
mkdir -p "$TREE"
# Only a workspace this script made is re-initialised (never, say, a checkout named by mistake).
if [ -e "$TREE/.git" ] && [ "$(git -C "$TREE" log -1 --format=%ae 2>/dev/null)" != "$GIT_AUTHOR_EMAIL" ]; then
  echo "accuracy.sh: $TREE/.git is not a workspace of this script; choose another ACCURACY_TREE" >&2
  exit 2
fi
[ "$(cd "$TREE" && pwd -P)" != "$(pwd -P)" ] || { echo "accuracy.sh: ACCURACY_TREE is the checkout" >&2; exit 2; }
rm -rf "$TREE/.git"
"${GIT[@]}" init -q
printf '.perfhat.json\n.cache\nbuild\nbuild-*\n' > "$TREE/.git/info/exclude"
KEEP=${ACCURACY_KEEP:-}
REUSE=${ACCURACY_REUSE:-}
PREDICT_ONLY=${ACCURACY_PREDICT_ONLY:-0}
case "$PREDICT_ONLY" in 0|1) ;; *) echo "accuracy.sh: ACCURACY_PREDICT_ONLY is 0 or 1" >&2; exit 2 ;; esac
BASELINE_ONLY=${ACCURACY_BASELINE_ONLY:-0}
case "$BASELINE_ONLY" in 0|1) ;; *) echo "accuracy.sh: ACCURACY_BASELINE_ONLY is 0 or 1" >&2; exit 2 ;; esac
[ -n "$KEEP" ] && mkdir -p "$KEEP"
if [ -n "$REUSE" ] && [ -f "$REUSE/baseline.bundle" ]; then
  # The revision the kept store names, with its text; links re-pointed at this checkout.
  "${GIT[@]}" fetch -q "$REUSE/baseline.bundle" HEAD
  "${GIT[@]}" reset -q --hard FETCH_HEAD
  link_checkout
else
  [ -n "$REUSE" ] && echo "[accuracy] $REUSE has no baseline.bundle (kept before the git-based" \
    "baseline): the workspace is this checkout's samples, the store names no revision" >&2
  link_checkout
  sync_samples
  "${GIT[@]}" add -A .
  "${GIT[@]}" commit -q -m "deployed: samples/ of $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')"
fi
REV=$("${GIT[@]}" rev-parse HEAD)
echo "[accuracy] workspace $TREE at $REV" >&2
if [ -n "$REUSE" ] && [ -f "$REUSE/revision" ] && [ "$(cat "$REUSE/revision")" != "$REV" ]; then
  echo "accuracy.sh: $REUSE/revision says $(cat "$REUSE/revision"), the bundle gave $REV" >&2; exit 2
fi
if [ -n "$KEEP" ]; then
  echo "$REV" > "$KEEP/revision"
  "${GIT[@]}" bundle create -q "$KEEP/baseline.bundle" HEAD 2>/dev/null ||
    "${GIT[@]}" bundle create "$KEEP/baseline.bundle" HEAD >/dev/null 2>&1
fi

if [ -n "$REUSE" ]; then
  [ -f "$REUSE/baseline.sqlite" ] && { [ "$PREDICT_ONLY" = 1 ] || [ -f "$REUSE/rows.tsv" ]; } ||
    { echo "accuracy.sh: $REUSE has no baseline.sqlite / rows.tsv" >&2; exit 2; }
  echo "[accuracy] reusing the baseline store and measurements of $REUSE" >&2
  cp "$REUSE/baseline.sqlite" "$TMP/baseline.sqlite"
  start handler-baseline "$HANDLER" --mode deployed --listen 127.0.0.1:0 \
    --store "$TMP/baseline.sqlite" --allow-unauthenticated --range-hours 8760
  BASELINE=$ADDR
else
  echo "[accuracy] baseline run (${LOAD_S}s, ${RATE} req/s, service.version $REV)" >&2
  # The baseline binary is built from the checkout, whose samples/ are the commit's.
  deploy baseline "$S/agile-service" "$REV"
  BASELINE=$HANDLER_ADDR
  sleep 3  # the last export
  # A misspelled KEY would only show after every change was built and run: check them now.
  # (These reads also make the handler write what it holds behind: the backup below has it.)
  while IFS=$'\t' read -r _ _ _ _ _ key _; do
    read -r _ _ n <<<"$(stats_of "$BASELINE" "$key")"
    [ "$n" -gt 0 ] || { echo "accuracy.sh: no baseline data for key '$key'" >&2; exit 2; }
  done < "$CHANGES"
  first_key=$(head -n1 "$CHANGES" | cut -f6)
  batch_get "$BASELINE" "$first_key" | python3 -c '
import json, sys
items = json.load(sys.stdin).get("items", [])
versions = items[0].get("versions", []) if items else []
if sys.argv[1] not in versions:
    print("[accuracy] warning: the baseline data names versions %s, not %s" % (versions, sys.argv[1]),
          file=sys.stderr)' "$REV"
  [ -n "$KEEP" ] && sqlite3 "$TMP/baseline.sqlite" ".backup '$KEEP/baseline.sqlite'"
fi
if [ "$BASELINE_ONLY" = 1 ]; then
  [ -n "$KEEP" ] || { echo "accuracy.sh: ACCURACY_BASELINE_ONLY=1 needs ACCURACY_KEEP" >&2; exit 2; }
  echo "[accuracy] baseline kept in $KEEP (ACCURACY_BASELINE_ONLY: nothing predicted)" >&2
  exit 0
fi

# The workspace's compile database: the sample service's own sources (not its tests, fuzzers or
# the rest of the checkout), each once, pointed at $TREE. `--check --index` indexes it first, as
# the editor's background index does by default, so a callee defined in another file of the
# service is costed from its body (ACCURACY_INDEX=0: off, the changed file analysed alone).
mkdir -p "$CACHE/compile-db"
sed "s#$ROOT\([/ \"]\)#$TREE\1#g" "$BUILD/compile_commands.json" | python3 -c '
import json, sys
tree = sys.argv[1]
seen, out = set(), []
for e in json.load(sys.stdin):
    f = e.get("file", "")
    if not f.startswith(tree + "/samples/agile/") or f.endswith(("_test.cc", "_fuzz.cc")):
        continue
    if f not in seen:
        seen.add(f)
        out.append(e)
json.dump(out, sys.stdout, indent=1)' "$TREE" > "$CACHE/compile-db/compile_commands.json"
INDEX_FLAG=()
[ "${ACCURACY_INDEX:-1}" = 1 ] && INDEX_FLAG=(--index)

: > "$TMP/rows.tsv"
while IFS=$'\t' read -r change set_of patch_file file function key category <&3; do
  echo "[accuracy] $change ($set_of, $category)" >&2
  # Back to the deployed text (git rewrites only the files that differ), then the change as an
  # uncommitted edit.
  "${GIT[@]}" checkout -q -- samples
  "${GIT[@]}" clean -fdq -- samples
  (cd "$TREE" && patch -s -p1 --no-backup-if-mismatch < "$ROOT/$patch_file")

  # Predicted, from the baseline data, before deploying; from the file's directory, so a git
  # lookup from there finds the workspace's repository. The function's hint shows the
  # configured statistic: one run per statistic.
  predicted=()
  for stat in p50 mean; do
    printf '{"features": {"main_statistic": "%s"}}\n' "$stat" > "$TREE/.perfhat.json"
    (cd "$(dirname "$TREE/$file")" &&
     "$LSP" --check "$TREE/$file" --handler "http://$BASELINE" --profile debug \
       --compile-commands "$CACHE/compile-db" "${INDEX_FLAG[@]}" --no-color \
       > "$TMP/check-$stat.txt" 2>/dev/null) || true
    predicted+=("$(python3 "$HERE/hint.py" "$TMP/check-$stat.txt" "$function")")
    [ -n "$KEEP" ] && cp "$TMP/check-$stat.txt" "$KEEP/check-$change-$stat.txt"
  done
  rm -f "$TREE/.perfhat.json"
  read -r predicted_p50 predicted_lo predicted_hi <<<"${predicted[0]}"
  read -r predicted_mean _ _ <<<"${predicted[1]}"
  regression=$(grep -q "warning perfhat.regression" "$TMP/check-p50.txt" && echo yes || echo no)
  improvement=$(grep -qE "(info|information) perfhat.improvement" "$TMP/check-p50.txt" && echo yes || echo no)
  case "$regression/$improvement" in
    yes/no) flagged=regression ;; no/yes) flagged=improvement ;; yes/yes) flagged=both ;; *) flagged=no ;;
  esac

  # Measured, after deploying the change.
  if [ "$PREDICT_ONLY" = 1 ]; then
    read -r before_p50 before_mean _ <<<"$(stats_of "$BASELINE" "$key")"
    measured_p50='' measured_mean='' count=''
  elif [ -n "$REUSE" ]; then
    # Rows kept before the manifest named a change by its patch's folder and name.
    # A change given on the command line (id c11_owner_…) matches the manifest's id (c11) too.
    legacy=$(basename "$(dirname "$patch_file")")/$(basename "$patch_file" .patch)
    read -r before_p50 before_mean measured_p50 measured_mean count <<<"$(awk -F'\t' \
      -v c="$change" -v l="$legacy" -v s="${change%%_*}" \
      '$1 == c || $1 == l || $1 == s { print $3, $4, $7, $8, $9; exit }' "$REUSE/rows.tsv")"
    [ -n "${count:-}" ] || { echo "accuracy.sh: no measurement of $change in $REUSE" >&2; exit 2; }
  else
    cmake -S "$TREE" -B "$PBUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DPERFHAT_BUILD_BENCHMARKS=OFF -DPERFHAT_BUILD_TESTS=OFF >/dev/null
    cmake --build "$PBUILD" --target agile-service -j2 >/dev/null
    deploy "$change-$RANDOM" "$PBUILD/samples/agile-service"
    sleep 3  # the last export
    read -r measured_p50 measured_mean count <<<"$(stats_of "$HANDLER_ADDR" "$key")"
    read -r before_p50 before_mean _ <<<"$(stats_of "$BASELINE" "$key")"
  fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$change" "$function" \
    "$before_p50" "$before_mean" "$predicted_p50" "$predicted_mean" "$measured_p50" \
    "$measured_mean" "$count" "$flagged" "$set_of" "$category" "$predicted_lo" "$predicted_hi" \
    >> "$TMP/rows.tsv"
  tail -n1 "$TMP/rows.tsv" >&2
done 3< "$CHANGES"
# Leave the workspace at the deployed revision.
"${GIT[@]}" checkout -q -- samples
"${GIT[@]}" clean -fdq -- samples

if [ "$PREDICT_ONLY" = 1 ]; then
  [ -n "$KEEP" ] && cp "$TMP/rows.tsv" "$KEEP/predictions.tsv"
  echo "Deployed revision (service.version): $REV; predictions only, by $LSP"
  printf 'change\tfunction\tbefore_p50\tbefore_mean\tpredicted_p50\tpredicted_mean\tmeasured_p50\tmeasured_mean\tcount\tflagged\tset\tcategory\tpredicted_low\tpredicted_high\n'
  cat "$TMP/rows.tsv"
  exit 0
fi
[ -n "$KEEP" ] && cp "$TMP/rows.tsv" "$KEEP/rows.tsv"
[ -n "$REUSE" ] && echo "(measurements reused from $REUSE; predictions recomputed)"
echo "Deployed revision (service.version): $REV"
python3 "$HERE/report.py" "$TMP/rows.tsv"
