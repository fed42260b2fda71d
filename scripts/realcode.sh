#!/usr/bin/env bash
# The real-code suite over googletest's sources (issue #18; tests/realcode/run.sh says what it
# does), in its long mode by default:
#
#   scripts/realcode.sh            long mode: googletest's samples and its whole test suite as the
#                                  workload, every function recorded, perfhat-lsp --check over all
#                                  of googletest's sources, headers and tests (about 100 files:
#                                  tens of minutes on 2 busy cores)
#   scripts/realcode.sh --medium   the samples as the workload with every function recorded
#                                  (googletest's internals and templates too), --check over the
#                                  samples and googletest's sources and headers (about 50 files)
#   scripts/realcode.sh --short    the CI mode (what `ctest -L realcode` runs)
#
# Builds what it needs (perfhat-handler, perfhat-lsp and libperfhat) in PERFHAT_BUILD_DIR
# (default: build), works in BUILD/realcode-<mode>, prints the figures (matched share, matched by
# which layer, warnings, the functions left unmatched with a first guess at why) and writes them
# to BUILD/realcode-<mode>/report.txt; the figures of bench/README.md come from there. Exit
# status 1 below --min-share (default 98) or on any regression warning.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/args.sh
mode=long
min_share=98
while [ $# -gt 0 ]; do
  case "$1" in
    --short) mode=short ;;
    --medium) mode=medium ;;
    --min-share) min_share=${2:?--min-share needs a value}; shift ;;
    *) help_or_unknown "$1" 2,19 ;;
  esac
  shift
done
source scripts/lib/build.sh
build_targets "${PERFHAT_JOBS:-2}" perfhat-handler perfhat-lsp perfhat perfhat_otlp \
  perfhat_autoinstrument perfhat_xray
exec bash tests/realcode/run.sh --build "$build" --work "$build/realcode-$mode" --mode "$mode" \
  --min-share "$min_share"
