#!/usr/bin/env bash
# Every change of the accuracy study, as listed in bench/prediction/changes.tsv (the four
# maintenance tasks, bench/prediction/changes/*.patch; each with the function it changes, that
# function's key, its category and its set).
#
#   bench/prediction/all_changes.sh BUILD_DIR [--set dev|eval|heldout|heldout2|heldout3|heldout4|heldout5|all] [--only C1,C2,...]
#
# --set dev: the development set only (the changes the analysis may be tuned against); --set
# eval: the evaluation set only (report it, do not tune against it); --set heldout: the changes
# written after dev and eval had been looked at, before the analysis was tuned again (c43-c61,
# measured once, since then development data too); --set heldout2: c62-c76, written before
# the next round of analysis changes (measured once, since then development data too); --set
# heldout3: c77-c91, written before the round after that (measured once, since then development data too); --set
# heldout4: c92-c102, written before the next round (measured once, since then development data too); --set
# heldout5: c103-c111, written before the round after that (measure once, report as it comes out); default all. --only picks
# changes by id (e.g. --only c10,c22). Environment as for accuracy.sh (ACCURACY_LOAD_S,
# ACCURACY_RATE, ACCURACY_KEEP, ACCURACY_REUSE, ACCURACY_LSP). One workload run of
# ACCURACY_LOAD_S seconds for the baseline plus, per change, an incremental build of the sample
# service and one workload run.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:?usage: all_changes.sh BUILD_DIR [--set dev|eval|heldout|heldout2|heldout3|heldout4|heldout5|all] [--only IDS]}
shift
exec bash bench/prediction/accuracy.sh "$BUILD" --manifest bench/prediction/changes.tsv "$@"
