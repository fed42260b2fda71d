#!/usr/bin/env bash
# Cost of automatic instrumentation on a call-heavy program (issue #18; bench/README.md,
# "Automatic instrumentation"). Uses the build tree's instr_autobench_{plain,auto} (GCC,
# -finstrument-functions) and builds the same program with clang++ twice more: plain and with
# LLVM XRay (-fxray-instrument, perfhat::xray).
#   bench/autobench.sh [build-dir=build] [reps=5] [ops=300000]
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
"$CLANG" "${FLAGS[@]}" -DAUTOBENCH_INSTRUMENTED -fxray-instrument \
  -fxray-instruction-threshold="$THRESHOLD" "$SRC/bench/instrumentation/autobench.cc" \
  -o "$OUT/xray" -Wl,--undefined=perfhat_xray_anchor "$BUILD/instrumentation/libperfhat_xray.a" \
  "$BUILD/instrumentation/libperfhat.a" -lpthread -ldl

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

# Reported latencies (phase-1 mean of each function, what the aggregates export, with the
# default sampler and a Tigris filter) against the plain build's own timing of the same calls
# (median per call, clock cost subtracted); each the median over $REPS runs.
LAT_REPS=${LAT_REPS:-$REPS}
FUNCS=(get put scan checksum)
declare -A LAT
for ((r = 0; r < LAT_REPS; ++r)); do
  for build in gcc clang; do
    if [[ $build == gcc ]]; then plain=$BIN/instr_autobench_plain auto=$BIN/instr_autobench_auto
    else plain=$OUT/plain auto=$OUT/xray; fi
    out=$("$plain" latency 4000)
    for f in "${FUNCS[@]}"; do
      LAT[$build plain $f]+="$(grep "harness median" <<<"$out" | sed -E "s/.* $f ([0-9.]+) ns.*/\1/") "
      LAT[$build mean $f]+="$(grep "harness mean" <<<"$out" | sed -E "s/.* $f ([0-9.]+) ns.*/\1/") "
    done
    for comp in 1 0; do
      out=$(PERFHAT_SCOPE='kv::*' PERFHAT_FILTER='most expensive' PERFHAT_COMPENSATE=$comp \
            "$auto" latency 4000)
      for f in "${FUNCS[@]}"; do
        v=$({ grep -E "^reported kv::(Db::)?$f\(" <<<"$out" || true; } | head -1 |
            sed -E 's/.*phase-1 calls +[0-9]+ mean +([0-9.]+) ns.*/\1/')
        LAT[$build comp$comp $f]+="${v:-nan} "
      done
    done
  done
done
echo
# The reference is the median: on a shared machine the plain build's mean is dominated by
# preempted calls. The reported figures are means (what phase 1 exports).
echo "| function | build | uninstrumented, median (mean) ns | reported mean, compensated ns | reported mean, not compensated ns |"
echo "|---|---|---|---|---|"
for build in gcc clang; do
  for f in "${FUNCS[@]}"; do
    med=$(median <<<"${LAT[$build plain $f]}")
    p=$(median <<<"${LAT[$build mean $f]}")
    c=$(median <<<"${LAT[$build comp1 $f]}")
    u=$(median <<<"${LAT[$build comp0 $f]}")
    awk -v f="$f" -v b="$build" -v m="$med" -v p="$p" -v c="$c" -v u="$u" 'BEGIN {
      if (c == "nan" || c == "") { printf "| %s | %s | %.0f (%.0f) | (no sled) | (no sled) |\n", f, b, m, p; exit }
      printf "| %s | %s | %.0f (%.0f) | %.0f (%+.0f %%) | %.0f (%+.0f %%) |\n", f, b, m, p, c, (c / m - 1) * 100, u, (u / m - 1) * 100 }'
  done
done
