#!/usr/bin/env bash
# The README's test command: installs what is missing, builds everything and runs every test once.
# The unit and fuzz-replay tests run under ASan+UBSan in a Debug tree of their own (those whose
# checks are about optimized code, marked OPTIMIZED in CMake, also run in the optimized tree); the
# integration, editor and real-code tests run against the optimized build; the unit tests of the
# multi-threaded components run again under TSan.
#   PERFHAT_BUILD_DIR   build folder (default: build); the sanitizer trees are $build-asan, $build-tsan
#   PERFHAT_SANITIZE    which sanitizer runs follow the normal tests:
#     short (default)   ASan+UBSan over every unit and fuzz-replay test; TSan over the unit tests
#                       of the multi-threaded components (tsan_short_targets below). Sized for CI.
#     full (or 1)       ASan+UBSan over every unit and fuzz-replay test, TSan over every unit test
#     0                 none: the optimized tree builds and runs the unit and fuzz-replay tests
#   PERFHAT_SKIP_EDITOR_TESTS=1  explicit opt-out of the real-editor tests (reported, never silent)
#   PERFHAT_DEBUG_INFO  debug information of the four trees (default: lines, compressed line tables;
#                       full takes about 15 GB of disk for all four, lines under 3 GB)
set -euo pipefail
cd "$(dirname "$0")/.."

# The short TSan run: the unit tests of the code that shares state between threads (engine,
# exporter, ingest pipeline and store, HTTP server, worker pool, span index, the language
# server's scheduler and feedback cache, the sample service). Parsers, libclang analysis and
# editor features run on one thread; the ASan+UBSan run covers them.
tsan_short_targets=(
  instr_engine_test instr_otlp_test instr_autoinstrument_test instr_calibration_test
  handler_store_test handler_http_unit_test handler_util_test handler_aggregator_test
  lsp_server_test lsp_feedback_test samples_agile_test
)

# Each step says when it ends and how long it took: the whole command has to fit CI's time.
started=$SECONDS
step_done() { echo "[test] $1 done at $((SECONDS - started)) s (took $((SECONDS - $2)) s)"; }

t=$SECONDS
bash scripts/install-deps.sh
if [ "${PERFHAT_SKIP_EDITOR_TESTS:-0}" != 1 ] && [ -x scripts/setup-editors.sh ]; then
  bash scripts/setup-editors.sh
fi
step_done "set-up" "$t"

build=${PERFHAT_BUILD_DIR:-build}
jobs=$(nproc)
debug_info=${PERFHAT_DEBUG_INFO:-lines}
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
sanitize=${PERFHAT_SANITIZE:-short}
case "$sanitize" in
  0 | off | short | full) ;;
  1) sanitize=full ;;
  *) echo "[test] PERFHAT_SANITIZE=$sanitize: expected short, full or 0" >&2; exit 2 ;;
esac

# Disk is the resource a fresh machine is shortest of: say what there is, before and after.
disk_report() {
  echo "[test] disk $1: $(df -h --output=avail . | tail -1 | tr -d ' ') free here," \
    "$(df -h --output=avail "${TMPDIR:-/tmp}" | tail -1 | tr -d ' ') in ${TMPDIR:-/tmp}"
}
disk_report "at the start"
# Before each further tree: on a short disk, the finished trees' object files go (their test
# programs stay); a later run rebuilds them from ccache.
free_disk_for_next_tree() {
  local avail_kb
  avail_kb=$(df -k --output=avail . | tail -1 | tr -d ' ')
  if [ "$avail_kb" -lt $((4 * 1024 * 1024)) ]; then
    echo "[test] under 4 GB free: removing the object files of the trees built so far"
    find "$build" "$build"-tsa "$build"-asan "$build"-tsan -name '*.o' -delete 2>/dev/null || true
    disk_report "after that"
  fi
}

# Where the ASan+UBSan tree runs the unit and fuzz-replay tests, the optimized tree leaves them out.
case "$sanitize" in
  0 | off) unit_tests_here=ON ;;
  *) unit_tests_here=OFF ;;
esac
echo "[test] configuring $build (unit tests here: $unit_tests_here)"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPERFHAT_DEBUG_INFO="$debug_info" \
  -DPERFHAT_UNIT_TESTS="$unit_tests_here" "${launcher[@]}" >/dev/null
echo "[test] building with $jobs jobs"
t=$SECONDS
cmake --build "$build" -j"$jobs"
step_done "build of $build" "$t"

echo "[test] running ctest"
t=$SECONDS
ctest --test-dir "$build" --output-on-failure -j"$jobs" --timeout 900
step_done "ctest in $build" "$t"

# sanitizer_run PRESET DIR LABELS TARGET...: configure DIR from CMakePresets.json's PRESET, build
# only TARGET..., run the tests with LABELS. Tests of targets not built are not registered.
failed=()
sanitizer_run() {
  local preset=$1 dir=$2 labels=$3
  shift 3
  local start=$SECONDS
  free_disk_for_next_tree
  echo "[test] $preset: building $* in $dir"
  cmake --preset "$preset" -B "$dir" -DPERFHAT_DEBUG_INFO="$debug_info" "${launcher[@]}" >/dev/null
  # ASan's own alternate signal stack: libclang (LLVM's crash-recovery signal handlers) replaces
  # it on the threads it parses on, and ASan then fails to unmap it when the thread ends ("failed
  # to deallocate", every test that parses with libclang). Seen on one machine of CI's kind, not
  # on another; without it ASan still reports everything but a stack overflow's own location.
  local asan_options=${ASAN_OPTIONS:-}
  [ "$preset" = asan ] && asan_options="use_sigaltstack=0${asan_options:+:$asan_options}"
  if cmake --build "$dir" -j"$jobs" --target "$@" &&
    ASAN_OPTIONS=$asan_options ctest --test-dir "$dir" --output-on-failure -j"$jobs" --timeout 900 \
      -L "$labels"; then
    echo "[test] $preset: passed in $((SECONDS - start)) s (at $((SECONDS - started)) s)"
  else
    echo "[test] $preset: FAILED after $((SECONDS - start)) s"
    failed+=("$preset")
  fi
}

# Checked locking: the annotated shared state (common/thread_annotations.h) compiled by clang with
# -Werror=thread-safety (CMakePresets.json `tsa`). Compile only; nothing to run.
if command -v clang++ >/dev/null; then
  start=$SECONDS
  free_disk_for_next_tree
  echo "[test] tsa: clang thread-safety analysis of tsa_targets in $build-tsa"
  cmake --preset tsa -B "$build-tsa" -DPERFHAT_DEBUG_INFO="$debug_info" "${launcher[@]}" >/dev/null
  if cmake --build "$build-tsa" -j"$jobs" --target tsa_targets; then
    echo "[test] tsa: passed in $((SECONDS - start)) s (at $((SECONDS - started)) s)"
  else
    echo "[test] tsa: FAILED after $((SECONDS - start)) s"
    failed+=(tsa)
  fi
else
  echo "[test] tsa: clang++ missing, thread-safety analysis skipped" >&2
  failed+=(tsa)
fi

if [ "$sanitize" = short ]; then
  sanitizer_run asan "$build-asan" 'unit|fuzz' unit_tests fuzz_replayers
  sanitizer_run tsan "$build-tsan" unit "${tsan_short_targets[@]}"
elif [ "$sanitize" = full ]; then
  sanitizer_run asan "$build-asan" 'unit|fuzz' unit_tests fuzz_replayers
  sanitizer_run tsan "$build-tsan" unit unit_tests
else
  echo "[test] sanitizer runs skipped (PERFHAT_SANITIZE=$sanitize)"
fi
disk_report "at the end"
du -sh "$build" "$build"-tsa "$build"-asan "$build"-tsan 2>/dev/null | sed 's/^/[test] size /' || true
if [ ${#failed[@]} -gt 0 ]; then
  echo "[test] sanitizer or thread-safety runs failed: ${failed[*]}" >&2
  exit 1
fi
echo "[test] all tests passed in $((SECONDS - started)) s"
