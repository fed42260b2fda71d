#!/usr/bin/env bash
# Cost of automatic instrumentation on a call-heavy program (issue #18; bench/README.md,
# "Automatic instrumentation"). Uses the build tree's instr_autobench_{plain,auto} (GCC,
# -finstrument-functions) and builds the same program with clang++ twice more: plain and with
# LLVM XRay (-fxray-instrument, perfhat::xray).
#   bench/autobench.sh [build-dir=build] [reps=5] [ops=300000]
#   THROUGHPUT=0: the latency table only; LAT_REPS, LAT_CALLS: its runs and calls per run.
# OLD_AUTO=<binary> adds a row for an older instr_autobench_auto (the "before" figures).
set -euo pipefail
BUILD=${1:-build}
REPS=${2:-5}
OPS=${3:-300000}
SRC=$(cd "$(dirname "$0")/.." && pwd)
BIN=$BUILD/bench/instrumentation
OUT=$BUILD/bench/autobench-clang
CLANG=${CLANG:-clang++-14}
THRESHOLD=${XRAY_THRESHOLD:-200}
cmake --build "$BUILD" --target instr_autobench_plain instr_autobench_auto perfhat perfhat_xray >/dev/null
mkdir -p "$OUT"
FLAGS=(-std=c++17 -O2 -g -DNDEBUG -I"$SRC/instrumentation/include" -I"$SRC/instrumentation/src")
"$CLANG" "${FLAGS[@]}" "$SRC/bench/instrumentation/autobench.cc" -o "$OUT/plain"
# The latency mode's uninstrumented copy of the same functions: no sleds.
"$CLANG" "${FLAGS[@]}" -c "$SRC/bench/instrumentation/autobench_plain_copy.cc" -o "$OUT/plain_copy.o"
"$CLANG" "${FLAGS[@]}" -DAUTOBENCH_INSTRUMENTED -fxray-instrument \
  -fxray-instruction-threshold="$THRESHOLD" "$SRC/bench/instrumentation/autobench.cc" \
  "$OUT/plain_copy.o" -o "$OUT/xray" -fxray-modes=none -Wl,--undefined=perfhat_xray_anchor \
  "$BUILD/instrumentation/libperfhat_xray.a" "$BUILD/instrumentation/libperfhat.a" -lpthread -ldl

# name | environment | binary
CONFIGS=(
  "gcc plain||$BIN/instr_autobench_plain"
  "gcc -finstrument-functions, off|PERFHAT_ENABLED=0|$BIN/instr_autobench_auto"
  "gcc -finstrument-functions, Tigris filter|PERFHAT_FILTER=most expensive|$BIN/instr_autobench_auto"
  "gcc -finstrument-functions, no filter|PERFHAT_FILTER=|$BIN/instr_autobench_auto"
  "clang plain||$OUT/plain"
  "clang XRay, off|PERFHAT_ENABLED=0|$OUT/xray"
  "clang XRay, Tigris filter|PERFHAT_FILTER=most expensive|$OUT/xray"
  "clang XRay, no filter|PERFHAT_FILTER=|$OUT/xray"
)
if [[ -n "${OLD_AUTO:-}" ]]; then
  CONFIGS+=("gcc before, off|PERFHAT_ENABLED=0|$OLD_AUTO"
            "gcc before, Tigris filter|PERFHAT_FILTER=most expensive|$OLD_AUTO")
fi
declare -A RESULTS
# THROUGHPUT=0: the latency table only.
for ((r = 0; r < (${THROUGHPUT:-1} ? REPS : 0); ++r)); do  # interleaved: load changes hit every row alike
  for c in "${CONFIGS[@]}"; do
    IFS='|' read -r name envs bin <<<"$c"
    line=$(env ${envs:+"$envs"} "$bin" throughput "$OPS" | head -1)
    cpu=$(sed -E 's/.*, ([0-9]+) ops per CPU-second.*/\1/' <<<"$line")
    RESULTS[$name]+="$cpu "
  done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
if ((${THROUGHPUT:-1})); then
echo "| configuration | ops per CPU-second, median of $REPS | vs its compiler's plain build |"
echo "|---|---|---|"
gcc_base=$(median <<<"${RESULTS[gcc plain]}")
clang_base=$(median <<<"${RESULTS[clang plain]}")
for c in "${CONFIGS[@]}"; do
  IFS='|' read -r name _ _ <<<"$c"
  m=$(median <<<"${RESULTS[$name]}")
  base=$gcc_base
  [[ $name == clang* ]] && base=$clang_base
  awk -v n="$name" -v m="$m" -v b="$base" -v all="${RESULTS[$name]}" \
    'BEGIN {printf "| %s | %d (%s) | %+.1f %% |\n", n, m, all, (b / m - 1) * 100}'
done
fi

# Reported latencies against an uninstrumented timing of the same functions in the same run: the
# instrumented binary's latency mode times an uninstrumented copy of each function call by call
# interleaved with the instrumented calls, and reads what libperfhat reported for each call it
# timed (phase 1, default sampler, Tigris filter selecting). Per-call medians (on a shared machine
# a mean is dominated by preempted calls); each figure is the median over $LAT_REPS runs of that
# run's reported median / uninstrumented median. Compensation: on (the start-up calibration); on
# with the experimental in-context sampling (PERFHAT_COMPENSATE_IN_CONTEXT=1); off.
LAT_REPS=${LAT_REPS:-$REPS}
LAT_CALLS=${LAT_CALLS:-20000}
FUNCS=(get put scan checksum)
MODES=("1|" "1|PERFHAT_COMPENSATE_IN_CONTEXT=1" "0|")
declare -A LAT
for ((r = 0; r < LAT_REPS; ++r)); do
  for build in gcc clang; do
    auto=$BIN/instr_autobench_auto
    [[ $build == clang ]] && auto=$OUT/xray
    for mode in "${MODES[@]}"; do
      IFS='|' read -r comp extra <<<"$mode"
      out=$(env ${extra:+"$extra"} PERFHAT_SCOPE='kv::*' PERFHAT_FILTER='most expensive' \
            PERFHAT_COMPENSATE=$comp "$auto" latency "$LAT_CALLS")
      for f in "${FUNCS[@]}"; do
        line=$({ grep -E "^latency $f " <<<"$out" || true; } | head -1)
        plain=$(sed -E 's/.*uninstrumented median ([0-9.]+).*/\1/' <<<"$line")
        rep=$(sed -nE 's/.*reported median ([0-9.]+).*/\1/p' <<<"$line")
        LAT[$build plain $f]+="$plain "
        LAT[$build $mode $f]+="$(awk -v r="${rep:-nan}" -v p="$plain" \
          'BEGIN { if (r == "nan") print "nan"; else printf "%.1f", (r / p - 1) * 100 }') "
      done
    done
  done
done
echo
echo "| function | build | uninstrumented, median ns | compensated | + in-context sampling | not compensated |"
echo "|---|---|---|---|---|---|"
for build in gcc clang; do
  for f in "${FUNCS[@]}"; do
    row="| $f | $build | $(median <<<"${LAT[$build plain $f]}")"
    for mode in "${MODES[@]}"; do
      v=$(median <<<"${LAT[$build $mode $f]}")
      if [[ $v == nan || -z $v ]]; then row+=" | (no sled)"; else
        row+=" | $(printf '%+.0f %%' "$v") ($(tr -s ' ' <<<"${LAT[$build $mode $f]}" | sed 's/ $//'))"
      fi
    done
    echo "$row |"
  done
done
