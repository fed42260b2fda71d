#!/usr/bin/env bash
# The reliability suite's long (soak) mode, then the table of docs/reliability.md from its figures.
#
#   scripts/reliability.sh                 long mode, 120 s of load per load/soak case
#   scripts/reliability.sh --seconds 600   long mode, 600 s per load/soak case
#   scripts/reliability.sh --short         the CI mode (what `ctest -L reliability` runs), a few
#                                          minutes, for a quick table
#
# It builds what it needs (perfhat-handler, perfhat-lsp, the two suite binaries and
# reliability_report) in PERFHAT_BUILD_DIR (default: build), runs every case once with
# PERFHAT_RELIABILITY_RESULTS pointing at BUILD/reliability/results.jsonl, and rewrites the part
# of docs/reliability.md between its markers with the date, the commit and the measured figures.
# The table is written whatever the outcome; the exit status is 1 when a case failed.
set -euo pipefail
cd "$(dirname "$0")/.."

source scripts/lib/args.sh
mode=long
seconds=120
while [ $# -gt 0 ]; do
  case "$1" in
    --short) mode=short ;;
    --seconds) seconds=${2:?--seconds needs a value}; shift ;;
    *) help_or_unknown "$1" 2,13 ;;
  esac
  shift
done

source scripts/lib/build.sh
build_targets "$(nproc)" perfhat-handler perfhat-lsp reliability_handler_test reliability_lsp_test \
  reliability_report

out="$build/reliability"
mkdir -p "$out"
results="$out/results.jsonl"
rm -f "$results"
export PERFHAT_RELIABILITY_MODE=$mode PERFHAT_RELIABILITY_SECONDS=$seconds
export PERFHAT_RELIABILITY_RESULTS=$PWD/$results

status=0
for suite in reliability_handler_test reliability_lsp_test; do
  echo "[reliability] $suite ($mode mode)"
  if ! "$build/tests/$suite" --gtest_color=no >"$out/$suite.log" 2>&1; then
    status=1
    echo "[reliability] $suite: failures (see $out/$suite.log):"
    grep '^\[  FAILED  \]' "$out/$suite.log" | sort -u || true
  fi
done

commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
if [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then commit="$commit + local changes"; fi
os=$(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME" || uname -s)
machine="$(nproc) vCPU, $os"
"$build/tests/reliability_report" "$results" docs/reliability.md --commit "$commit" \
  --date "$(date -u '+%Y-%m-%d %H:%M UTC')" --machine "$machine"
echo "[reliability] table written to docs/reliability.md (figures: $results)"
exit $status
