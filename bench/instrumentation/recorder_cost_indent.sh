#!/usr/bin/env bash
# Recorder cost on GNU indent (issue #24, beside seed 001's ×5.24 on GNU indent): fetches
# Debian's indent source package (apt-get source through a temporary deb-src list; nothing is
# committed), builds it twice with the same flags (plain, and -finstrument-functions linked with
# libperfhat through recorder_shim.cc), checks both print the same output, and times indent on
# its own sources concatenated COPIES and COPIES/4 times, alternately, ROUNDS times.
# Called by recorder_cost.sh with WORKLOAD=indent; prints the same table plus the marginal
# figures (large input minus small input: libperfhat's start-up cost cancels out).
#
#   bench/instrumentation/recorder_cost_indent.sh [BUILD_DIR=build] [ROUNDS=7] [COPIES=32]
#   INDENT_SRC=/path/to/indent_X.orig.tar.xz   use this tarball instead of apt-get source
#   CALLGRIND=1                                also count instructions (valgrind) on the small input
set -euo pipefail
build=$(realpath "${1:-build}")
rounds=${2:-7}
copies=${3:-32}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
work=$build/bench/indent
mkdir -p "$work"
cmake --build "$build" --target perfhat perfhat_autoinstrument >/dev/null

# 1. The source: Debian's package, fetched once.
tarball=${INDENT_SRC:-$(ls "$work"/indent_*.orig.tar.* 2>/dev/null | head -n1 || true)}
if [ -z "$tarball" ]; then
  apt_dir=$work/apt
  mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
  . /etc/os-release
  cat >"$apt_dir/src.sources" <<SRC
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: ${VERSION_CODENAME:-bookworm}
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  opts=(-o Dir::Etc::SourceList=/dev/null -o "Dir::Etc::SourceParts=$apt_dir"
        -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache" -o Debug::NoLocking=1)
  apt-get "${opts[@]}" update >"$work/apt.log" 2>&1
  (cd "$work" && apt-get "${opts[@]}" source --download-only indent >>"$work/apt.log" 2>&1) ||
    { echo "apt-get source indent failed (see $work/apt.log); set INDENT_SRC" >&2; exit 1; }
  tarball=$(ls "$work"/indent_*.orig.tar.* | head -n1)
fi
echo "source: $(basename "$tarball")"

# 2. Two builds, same configure and flags; only -finstrument-functions and the libraries differ.
build_indent() {
  local dir=$1 cflags=$2 libs=$3
  rm -rf "$dir" && mkdir -p "$dir"
  tar xf "$tarball" -C "$dir" --strip-components=1
  # The generated keyword tables ship in the tarball; keep make from asking for gperf.
  touch "$dir"/src/gperf*.c
  (cd "$dir" && ./configure --disable-nls CFLAGS="-O2 -g" >configure.log 2>&1)
  # indent's own -Werror trips on today's compilers; locale.h is missing with --disable-nls.
  make -C "$dir/src" AM_CFLAGS= CFLAGS="-O2 -g -include locale.h $cflags" CCLD=g++ \
    LIBS="$libs" >"$dir/make.log" 2>&1 || { echo "building indent failed: $dir/make.log" >&2; exit 1; }
}
g++ -std=c++17 -O2 -g -I"$repo/instrumentation/include" -c "$here/recorder_shim.cc" -o "$work/shim.o"
build_indent "$work/plain" "" ""
build_indent "$work/auto" "-finstrument-functions" \
  "$work/shim.o $build/instrumentation/libperfhat_autoinstrument.a $build/instrumentation/libperfhat.a -lpthread -ldl"

# 3. Inputs: indent's own sources, COPIES/4 and COPIES times.
small=$((copies / 4 > 0 ? copies / 4 : 1))
for n in $small $copies; do
  for ((i = 0; i < n; i++)); do cat "$work"/plain/src/*.c; done >"$work/input-$n.c"
done
run() {  # run MODE N -> seconds (wall clock of the whole process)
  local mode=$1 n=$2 bin=$work/auto/src/indent t0 t1
  [ "$mode" = plain ] && bin=$work/plain/src/indent
  t0=$(date +%s%N)
  RECORDER_MODE=$mode RECORDER_CALLS_FILE=$work/calls-$n "$bin" -npro -gnu -st "$work/input-$n.c" >"$work/out-$mode-$n.c"
  t1=$(date +%s%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.6f", (b - a) / 1e9}'
}
modes=(plain disabled aggregates spans)
declare -A runs
for ((r = 0; r < rounds; r++)); do
  for n in $small $copies; do
    for mode in "${modes[@]}"; do runs[$mode-$n]+="$(run "$mode" "$n") "; done
  done
done
for n in $small $copies; do
  for mode in disabled aggregates spans; do
    cmp -s "$work/out-plain-$n.c" "$work/out-$mode-$n.c" || { echo "output differs: $mode $n" >&2; exit 1; }
  done
done
calls() { grep -v '^calls 0$' "$work/calls-$1" | tail -n1 | awk '{print $2}'; }
calls_small=$(calls "$small")
calls_large=$(calls "$copies")
median() { tr ' ' '\n' <<<"$1" | grep . | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "load: $(cut -d' ' -f1-3 /proc/loadavg); rounds $rounds; inputs $(wc -l <"$work/input-$small.c") and $(wc -l <"$work/input-$copies.c") lines; calls per run $calls_small and $calls_large"
printf '%-12s %10s %9s %12s %12s %14s\n' mode large_s slowdown ns_per_event marginal_x marginal_ns/ev
ps=$(median "${runs[plain-$small]}")
pl=$(median "${runs[plain-$copies]}")
for mode in "${modes[@]}"; do
  ms=$(median "${runs[$mode-$small]}")
  ml=$(median "${runs[$mode-$copies]}")
  awk -v ms="$ms" -v ml="$ml" -v ps="$ps" -v pl="$pl" -v cs="$calls_small" -v cl="$calls_large" -v mode="$mode" 'BEGIN {
    printf "%-12s %10.3f %8.2fx %12.1f %11.2fx %14.1f\n", mode, ml, ml / pl, (ml - pl) * 1e9 / (2 * cl),
      (ml - ms) / (pl - ps), ((ml - ms) - (pl - ps)) * 1e9 / (2 * (cl - cs)) }'
done

# 4. Instruction counts (load-independent), small input, every thread of the process.
if [ "${CALLGRIND:-0}" = 1 ]; then
  ir() {
    local mode=$1 bin=$work/auto/src/indent
    [ "$mode" = plain ] && bin=$work/plain/src/indent
    RECORDER_MODE=$mode valgrind --tool=callgrind --callgrind-out-file="$work/cg-$mode.out" \
      "$bin" -npro -gnu -st "$work/input-$small.c" >/dev/null 2>"$work/cg-$mode.log"
    grep -E '^(summary|totals):' "$work/cg-$mode.out" | head -n1 | awk '{print $2}'
  }
  base=$(ir plain)
  echo "callgrind, input of $(wc -l <"$work/input-$small.c") lines, $calls_small calls:"
  printf '%-12s %14s %9s %16s\n' mode instructions ratio instr_per_event
  for mode in plain disabled aggregates spans; do
    i=$(ir "$mode")
    awk -v i="$i" -v b="$base" -v c="$calls_small" -v mode="$mode" 'BEGIN {
      printf "%-12s %14.0f %8.2fx %16.1f\n", mode, i, i / b, (i - b) / (2 * c) }'
  done
fi
