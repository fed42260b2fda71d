#!/usr/bin/env bash
# Cost of automatic instrumentation on a real code base (issue #18; bench/README.md, "Real-code
# suite: googletest"): googletest's sample programs built four ways — GCC uninstrumented, GCC with
# perfhat_autoinstrument() (-finstrument-functions), Clang uninstrumented, Clang with
# perfhat_autoinstrument(<t> XRAY) — each run with --gtest_repeat as the workload. Per
# configuration (plain; libperfhat off with PERFHAT_ENABLED=0; the default adaptive sampler with
# Tigris selecting, PERFHAT_FILTER="most expensive"; with XRay also without the selection carried
# between processes, PERFHAT_SELECTION_DIR=off) it measures:
#   * instructions of the whole process (valgrind callgrind, every thread), once: the load of
#     the machine does not change them (the Clang trees are built with -gdwarf-4: Valgrind 3.19
#     cannot read clang-14's DWARF 5; --smc-check=all, since XRay patches code at run time);
#   * CPU seconds (user + system, every thread), the median of --reps interleaved runs.
# Nothing exports (no PERFHAT_ENDPOINT): the cost measured is recording, not the network.
# --base-prefix DIR: also the two instrumented trees built against another installed perfhat (e.g.
# main's: `cmake --install <main build> --component dev --prefix DIR`), run interleaved with the
# others, rows marked "[base]": a before/after in one run, on one machine load.
# --xray-window N: one more row, XRay with the Tigris filter and a counting window of N calls
# (PERFHAT_PHASE1_WINDOW_CALLS; the default row uses the library's default).
# Per program instruction counts go to WORK/instructions.tsv (configuration, program, count).
# Usage: throughput.sh --lib-build DIR --work DIR [--base-prefix DIR] [--reps 5] [--repeat 200]
#                      [--xray-window N] [--no-callgrind]
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
LIB_BUILD= WORK= BASE_PREFIX= XRAY_WINDOW= REPS=5 REPEAT=200 CALLGRIND=1 GTEST_SRC=${GOOGLETEST_SOURCE_DIR:-/usr/src/googletest}
CLANG_CXX=${CLANG_CXX:-clang++-14} CLANG_CC=${CLANG_CC:-clang-14}
while [ $# -gt 0 ]; do
  case $1 in
    --lib-build) LIB_BUILD=$(cd "$2" && pwd); shift 2 ;;
    --work) WORK=$2; shift 2 ;;
    --base-prefix) BASE_PREFIX=$(cd "$2" && pwd); shift 2 ;;
    --reps) REPS=$2; shift 2 ;;
    --xray-window) XRAY_WINDOW=$2; shift 2 ;;
    --repeat) REPEAT=$2; shift 2 ;;
    --no-callgrind) CALLGRIND=0; shift ;;
    *) echo "throughput.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -n "$LIB_BUILD" ] && [ -n "$WORK" ] || { echo "usage: throughput.sh --lib-build DIR --work DIR" >&2; exit 2; }
[ -f "$GTEST_SRC/googletest/src/gtest.cc" ] || { echo "SKIP: no googletest sources in $GTEST_SRC"; exit 77; }
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
# The XRay Tigris rows carry their selection from run to run (docs/auto-instrumentation.md) in a
# directory of this run's own, started empty: the interleaved runs reach the steady state of a
# program run again and again (one process in about ten counts a window); the callgrind pass,
# after them, measures processes that start from a carried selection.
rm -rf "$WORK/selections" "$WORK/selections-base"
rm -rf "$WORK/prefix"
cmake --install "$LIB_BUILD" --component dev --prefix "$WORK/prefix" >"$WORK/install.log"
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)

# name | compiler (gcc|clang) | REALCODE_INSTRUMENT | perfhat prefix
TREES=("gcc-plain|gcc|NONE|$WORK/prefix" "gcc-auto|gcc|AUTO|$WORK/prefix"
  "clang-plain|clang|NONE|$WORK/prefix" "clang-xray|clang|XRAY|$WORK/prefix")
[ -n "$BASE_PREFIX" ] && TREES+=("gcc-auto-base|gcc|AUTO|$BASE_PREFIX"
  "clang-xray-base|clang|XRAY|$BASE_PREFIX")
for t in "${TREES[@]}"; do
  IFS='|' read -r name cc how prefix <<<"$t"
  compilers=()
  [ "$cc" = clang ] && compilers=(-DCMAKE_CXX_COMPILER="$CLANG_CXX" -DCMAKE_C_COMPILER="$CLANG_CC"
    -DCMAKE_CXX_FLAGS=-gdwarf-4 -DCMAKE_C_FLAGS=-gdwarf-4)
  echo "== build $name"
  cmake -S "$HERE/project" -B "$WORK/$name" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_PREFIX_PATH="$prefix" -DGOOGLETEST_SOURCE_DIR="$GTEST_SRC" \
    -DREALCODE_PROGRAMS=samples -DREALCODE_INSTRUMENT="$how" "${compilers[@]}" "${launcher[@]}" \
    >"$WORK/$name.configure.log" || { cat "$WORK/$name.configure.log"; exit 1; }
  cmake --build "$WORK/$name" -j "${REALCODE_JOBS:-2}" >"$WORK/$name.build.log" ||
    { tail -30 "$WORK/$name.build.log"; exit 1; }
done

programs=$(tr ';' ' ' <"$WORK/gcc-plain/programs.txt")
# name | tree | environment (assignments separated by ";")
CONFIGS=(
  "gcc plain|gcc-plain|"
  "gcc -finstrument-functions, off|gcc-auto|PERFHAT_ENABLED=0"
  "gcc -finstrument-functions, Tigris filter|gcc-auto|PERFHAT_FILTER=most expensive"
  "clang plain|clang-plain|"
  "clang XRay, off|clang-xray|PERFHAT_ENABLED=0"
  "clang XRay, Tigris filter|clang-xray|PERFHAT_FILTER=most expensive;PERFHAT_SELECTION_DIR=$WORK/selections"
  "clang XRay, Tigris filter, no carried selection|clang-xray|PERFHAT_FILTER=most expensive;PERFHAT_SELECTION_DIR=off"
)
[ -n "$XRAY_WINDOW" ] && CONFIGS+=("clang XRay, Tigris filter, window $XRAY_WINDOW calls|clang-xray|PERFHAT_FILTER=most expensive;PERFHAT_PHASE1_WINDOW_CALLS=$XRAY_WINDOW")
[ -n "$BASE_PREFIX" ] && CONFIGS+=(
  "gcc -finstrument-functions, off [base]|gcc-auto-base|PERFHAT_ENABLED=0"
  "gcc -finstrument-functions, Tigris filter [base]|gcc-auto-base|PERFHAT_FILTER=most expensive"
  "clang XRay, off [base]|clang-xray-base|PERFHAT_ENABLED=0"
  "clang XRay, Tigris filter [base]|clang-xray-base|PERFHAT_FILTER=most expensive;PERFHAT_SELECTION_DIR=$WORK/selections-base"
)
# Each tree's executables, found once: a `find` per program inside the timed runs was CPU time
# of its own (about 40 ms for the 10 samples, as much as the programs themselves) and diluted
# every figure of this script before 2026-11-26 (s34).
declare -A EXES
for t in "${TREES[@]}"; do
  IFS='|' read -r tname _ _ _ <<<"$t"
  for p in $programs; do
    EXES[$tname/$p]=$(find "$WORK/$tname" -type f -name "$p" -perm -u+x | head -1)
  done
done
# Runs every sample program of `tree` with `env`, through `wrap`; prints nothing.
run_all() {
  local tree=$1 envs=$2
  shift 2
  for p in $programs; do
    exe=${EXES[$tree/$p]}
    [ -n "$exe" ] || continue
    IFS=';' read -ra ev <<<"$envs"
    (cd "$WORK" && env -u PERFHAT_ENDPOINT "${ev[@]}" "$@" "$exe" --gtest_repeat="$REPEAT" \
      >/dev/null 2>>"$WORK/runs.err") || true
  done
}
cpu_of() {  # CPU seconds (user + system) of run_all, its children included
  local TIMEFORMAT='%U %S' out
  out=$( { time run_all "$1" "$2"; } 2>&1)
  awk '{print $1 + $2}' <<<"$out"
}
declare -A CPU INS
echo "== CPU time, $REPS interleaved runs (load: $(cut -d' ' -f1-3 /proc/loadavg))"
for ((r = 0; r < REPS; ++r)); do
  for c in "${CONFIGS[@]}"; do
    IFS='|' read -r name tree envs <<<"$c"
    CPU[$name]+="$(cpu_of "$tree" "$envs") "
  done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
if ((CALLGRIND)); then
  echo "== instructions (callgrind, every thread)"
  : >"$WORK/instructions.tsv"
  for c in "${CONFIGS[@]}"; do
    IFS='|' read -r name tree envs <<<"$c"
    total=0
    for p in $programs; do
      exe=${EXES[$tree/$p]}
      [ -n "$exe" ] || continue
      IFS=';' read -ra ev <<<"$envs"
      n=$(cd "$WORK" && env -u PERFHAT_ENDPOINT "${ev[@]}" valgrind --tool=callgrind \
        --smc-check=all --callgrind-out-file=/dev/null "$exe" --gtest_repeat="$REPEAT" 2>&1 >/dev/null |
        sed -nE 's/.*Collected : ([0-9]+).*/\1/p' | tail -1)
      total=$((total + ${n:-0}))
      printf '%s\t%s\t%s\n' "$name" "$p" "${n:-0}" >>"$WORK/instructions.tsv"
    done
    INS[$name]=$total
  done
fi
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo
echo "| configuration | CPU s, median of $REPS (the runs) | vs plain | instructions | vs plain |"
echo "|---|---|---|---|---|"
for c in "${CONFIGS[@]}"; do
  IFS='|' read -r name _ _ <<<"$c"
  base=gcc
  [[ $name == clang* ]] && base=clang
  m=$(median <<<"${CPU[$name]}")
  b=$(median <<<"${CPU[$base plain]}")
  awk -v n="$name" -v m="$m" -v b="$b" -v all="${CPU[$name]}" -v i="${INS[$name]:-0}" \
    -v ib="${INS[$base plain]:-0}" 'BEGIN {
      printf "| %s | %.2f (%s) | %+.1f %% | %s | %s |\n", n, m, all, (m / b - 1) * 100,
        i ? sprintf("%.0f M", i / 1e6) : "—", (i && ib) ? sprintf("%+.1f %%", (i / ib - 1) * 100) : "—"
    }'
done | tee "$WORK/throughput.md"
