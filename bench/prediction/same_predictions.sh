#!/usr/bin/env bash
# Whether another perfhat-lsp (an older build, a refactoring) predicts every change of the
# accuracy study as BUILD's does, on the same production data.
#
#   bench/prediction/same_predictions.sh BUILD_DIR OTHER_LSP [--set S] [--only C1,C2,...]
#
# One baseline workload run (ACCURACY_LOAD_S seconds) with BUILD_DIR's service and handler, kept;
# then `perfhat-lsp --check` on every change with BUILD_DIR's server and with OTHER_LSP, both
# against the kept store served the same way (bench/prediction/accuracy.sh with
# ACCURACY_PREDICT_ONLY=1 and ACCURACY_REUSE; nothing is built or measured per change), then
# bench/prediction/same_predictions.py over the two: the changed function's p50, mean, interval
# and flag, and every number of each annotated listing.
# SAME_PREDICTIONS_DIR=DIR keeps the baseline and both runs (DIR/baseline, DIR/a, DIR/b;
# default: a temporary directory).
# ACCURACY_INDEX=0 analyses each changed file alone (for a server without --index).
# Exit status: 0 the same predictions, 1 some differ, 2 the runs failed.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:?usage: same_predictions.sh BUILD_DIR OTHER_LSP [--set S] [--only IDS]}
OTHER=${2:?usage: same_predictions.sh BUILD_DIR OTHER_LSP [--set S] [--only IDS]}
shift 2
[ -x "$OTHER" ] || { echo "same_predictions.sh: $OTHER is not an executable" >&2; exit 2; }
OTHER=$(cd "$(dirname "$OTHER")" && pwd)/$(basename "$OTHER")
OUT=${SAME_PREDICTIONS_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/perfhat-same-predictions.XXXXXX")}
mkdir -p "$OUT"
rm -rf "$OUT/baseline" "$OUT/a" "$OUT/b"
echo "[same-predictions] baseline, kept in $OUT/baseline" >&2
ACCURACY_BASELINE_ONLY=1 ACCURACY_KEEP=$OUT/baseline ACCURACY_REUSE='' \
  bash bench/prediction/all_changes.sh "$BUILD" "$@" || exit 2
# Both servers read the kept store through the same kind of handler: the live one could still
# hold rows the copy does not.
echo "[same-predictions] $BUILD's server, kept in $OUT/a" >&2
ACCURACY_PREDICT_ONLY=1 ACCURACY_REUSE=$OUT/baseline ACCURACY_KEEP=$OUT/a \
  bash bench/prediction/all_changes.sh "$BUILD" "$@" > "$OUT/a.txt" || exit 2
echo "[same-predictions] $OTHER, kept in $OUT/b" >&2
ACCURACY_PREDICT_ONLY=1 ACCURACY_REUSE=$OUT/baseline ACCURACY_KEEP=$OUT/b ACCURACY_LSP=$OTHER \
  bash bench/prediction/all_changes.sh "$BUILD" "$@" > "$OUT/b.txt" || exit 2
python3 bench/prediction/same_predictions.py "$OUT/a" "$OUT/b" \
  --label-a "$BUILD/server/perfhat-lsp" --label-b "$OTHER"
