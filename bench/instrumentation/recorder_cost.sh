#!/usr/bin/env bash
# Recorder cost of libperfhat's entry/exit path (bench/README.md, "Recorder cost"): runs the
# plain and the -finstrument-functions builds of recorder_cost.cc alternately ROUNDS times and
# prints the median seconds of each, the slowdown ratios and ns per event (an event is one entry
# or one exit, as jzprof's records: 2 per call).
#
#   bench/instrumentation/recorder_cost.sh [BUILD_DIR=build] [ROUNDS=5] [REPS=20]
#   WORKLOAD=indent bench/instrumentation/recorder_cost.sh [BUILD_DIR] [ROUNDS=7] [COPIES=32]
#     GNU indent (a real C program, Debian's source package, built here) instead of
#     nlohmann::json: recorder_cost_indent.sh.
set -euo pipefail
if [ "${WORKLOAD:-json}" = indent ]; then
  exec bash "$(dirname "$0")/recorder_cost_indent.sh" "${1:-build}" "${2:-7}" "${3:-32}"
fi
build=${1:-build}
rounds=${2:-5}
reps=${3:-20}
dir="$build/bench/instrumentation"
cmake --build "$build" --target instr_recorder_cost_plain instr_recorder_cost_auto >/dev/null
declare -A runs
calls=0
for ((i = 0; i < rounds; i++)); do
  for mode in plain disabled aggregates spans; do
    if [ "$mode" = plain ]; then
      out=$("$dir/instr_recorder_cost_plain" "$reps")
    else
      out=$("$dir/instr_recorder_cost_auto" "$reps" "$mode")
    fi
    runs[$mode]+="$(awk '{print $2}' <<<"$out") "
    c=$(awk '{print $4}' <<<"$out")
    [ "$c" -gt 0 ] && calls=$c
  done
done
median() { tr ' ' '\n' <<<"$1" | grep . | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
plain=$(median "${runs[plain]}")
echo "load: $(cut -d' ' -f1-3 /proc/loadavg); rounds $rounds; reps $reps; calls per run $calls"
printf '%-12s %10s %9s %12s\n' mode median_s slowdown ns_per_event
for mode in plain disabled aggregates spans; do
  m=$(median "${runs[$mode]}")
  awk -v m="$m" -v p="$plain" -v c="$calls" -v mode="$mode" 'BEGIN {
    printf "%-12s %10.3f %8.2fx %12.1f\n", mode, m, m / p, (m - p) * 1e9 / (2 * c) }'
done
