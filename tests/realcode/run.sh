#!/usr/bin/env bash
# The real-code suite (issue #18): googletest's own sources, built as its users build them
# (CMake) with automatic instrumentation (-finstrument-functions + perfhat_autoinstrument()),
# its own test programs run as the workload against a real perfhat-handler, then
# `perfhat-lsp --check` over its sources with that data. Prints and checks:
#   * the share of measured functions (every key the handler stored) matched to a definition
#     in the checked sources (goal ≥ 98 %: --min-share);
#   * regression warnings on the unmodified sources (must be 0).
# Usage: run.sh --build DIR --work DIR [--mode short|medium|long] [--min-share PCT] [--lib-build DIR]
#   --lib-build: the build tree whose libperfhat is installed for googletest (default: --build).
#   short: googletest's samples as the workload, recording the samples' own functions (and the
#          test classes and bodies googletest's macros generate in them), --check over the
#          samples' files; CI runs it (label realcode, a few minutes on 2 cores).
#   medium: googletest's samples as the workload, every function recorded (googletest's
#          internals and templates too), --check over the samples and googletest's own sources
#          and headers (about 50 files); scripts/realcode.sh --medium.
#   long:  its samples and its whole test suite as the workload, every function recorded,
#          --check over all of googletest's sources, headers and tests; scripts/realcode.sh.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD= LIB_BUILD= WORK= MODE=short MIN_SHARE=98 GTEST_SRC=${GOOGLETEST_SOURCE_DIR:-/usr/src/googletest}
while [ $# -gt 0 ]; do
  case $1 in
    --build) BUILD=$(cd "$2" && pwd); shift 2 ;;
    --lib-build) LIB_BUILD=$(cd "$2" && pwd); shift 2 ;;
    --work) WORK=$2; shift 2 ;;
    --mode) MODE=$2; shift 2 ;;
    --min-share) MIN_SHARE=$2; shift 2 ;;
    *) echo "run.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -n "$BUILD" ] && [ -n "$WORK" ] || { echo "usage: run.sh --build DIR --work DIR [--mode short|long]" >&2; exit 2; }
[ -f "$GTEST_SRC/googletest/src/gtest.cc" ] || { echo "SKIP: no googletest sources in $GTEST_SRC"; exit 77; }
LSP=$BUILD/server/perfhat-lsp
HANDLER=$BUILD/feedback-handler/perfhat-handler
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
TMP=$WORK
# shellcheck source=../../scripts/lib/processes.sh
. "$HERE/../../scripts/lib/processes.sh"
trap stop_all EXIT

echo "== install libperfhat (dev component) into $WORK/prefix"
rm -rf "$WORK/prefix"
cmake --install "${LIB_BUILD:-$BUILD}" --component dev --prefix "$WORK/prefix" >"$WORK/install.log"

echo "== build googletest ($MODE) instrumented"
programs=samples
[ "$MODE" = long ] && programs=all
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
cmake -S "$HERE/project" -B "$WORK/gtest-build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_PREFIX_PATH="$WORK/prefix" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON \
  -DGOOGLETEST_SOURCE_DIR="$GTEST_SRC" -DREALCODE_PROGRAMS=$programs "${launcher[@]}" \
  >"$WORK/configure.log" || { cat "$WORK/configure.log"; exit 1; }
cmake --build "$WORK/gtest-build" -j "${REALCODE_JOBS:-2}" >"$WORK/build.log" ||
  { tail -50 "$WORK/build.log"; exit 1; }

echo "== workload: googletest's test programs against a perfhat-handler"
rm -f "$WORK"/store.sqlite*
token=realcode-$$
# The handler's log is truncated before it starts and read until it says where it listens: a
# previous run's log in the same work directory is never taken for this one's.
start handler "$HANDLER" --mode deployed --listen 127.0.0.1:0 --store "$WORK/store.sqlite" \
  --token "$token"
url=http://$ADDR
ran=0
scope=
# Short mode: googletest's own API and internals are not recorded (their definitions are not
# checked). The scope matches the demangled name, which starts with the return type for template
# instantiations (`std::string testing::PrintToString<int>(int const&)`): both forms are denied,
# and the mangled names of the internals the demangler cannot spell (template conversion
# operators: `_ZNK7testing8internal10ValueArrayIJbbEEcvNS0_14ParamGeneratorIT_EEIbEEv`).
[ "$MODE" = short ] && scope='-testing::*,-* testing::*,-RUN_ALL_TESTS*,-_Z*7testing8internal*'
for p in $(tr ';' ' ' <"$WORK/gtest-build/programs.txt"); do
  exe=$(find "$WORK/gtest-build" -type f -name "$p" -perm -u+x | head -1)
  [ -n "$exe" ] || continue
  # Programs that test failure output, death and exit paths fail on purpose: their status is
  # googletest's business; what they ran is the workload.
  (cd "$WORK" && PERFHAT_ENDPOINT=$url PERFHAT_TOKEN=$token PERFHAT_SAMPLER=full PERFHAT_SCOPE=$scope \
    timeout 120 "$exe" >"$WORK/run-$p.log" 2>&1) || true
  ran=$((ran + 1))
done
echo "ran $ran test programs"

echo "== perfhat-lsp --check over googletest's sources"
files=$(ls "$GTEST_SRC"/googletest/samples/*.cc "$GTEST_SRC"/googletest/samples/*.h)
if [ "$MODE" != short ]; then
  files="$files $(ls "$GTEST_SRC"/googletest/include/gtest/*.h \
    "$GTEST_SRC"/googletest/include/gtest/internal/*.h "$GTEST_SRC"/googletest/src/*.cc \
    "$GTEST_SRC"/googletest/src/*.h | grep -v gtest-all.cc)"
fi
if [ "$MODE" = long ]; then
  files="$files $(ls "$GTEST_SRC"/googletest/test/*.cc "$GTEST_SRC"/googletest/test/*.h)"
fi
rm -f "$WORK/matches.jsonl"
checked=0
for f in $files; do
  "$LSP" --check "$f" --handler "$url" --token "$token" \
    --compile-commands "$WORK/gtest-build" --match-report "$WORK/matches.jsonl" --no-color \
    >"$WORK/check-$(basename "$f").out" 2>"$WORK/check-$(basename "$f").err" ||
    { cat "$WORK/check-$(basename "$f").err"; echo "FAIL: --check $f"; exit 1; }
  checked=$((checked + 1))
done
echo "checked $checked files"
stop_all
PIDS=()
python3 "$HERE/report.py" --store "$WORK/store.sqlite" --matches "$WORK/matches.jsonl" \
  --min-share "$MIN_SHARE" --out "$WORK/report.txt"
