#!/usr/bin/env bash
# The README's test command: installs what is missing, builds everything, runs every test.
#   PERFHAT_BUILD_DIR   build folder (default: build)
#   PERFHAT_SANITIZE=1  also build a separate ASan/UBSan tree and run the unit tests in it
#   PERFHAT_SKIP_EDITOR_TESTS=1  explicit opt-out of the real-editor tests (reported, never silent)
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
if [ "${PERFHAT_SKIP_EDITOR_TESTS:-0}" != 1 ] && [ -x scripts/setup-editors.sh ]; then
  bash scripts/setup-editors.sh
fi

build=${PERFHAT_BUILD_DIR:-build}
jobs=$(nproc)
echo "[test] configuring $build"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
echo "[test] building with $jobs jobs"
cmake --build "$build" -j"$jobs"

echo "[test] running ctest"
ctest --test-dir "$build" --output-on-failure -j"$jobs" --timeout 900

if [ "${PERFHAT_SANITIZE:-0}" = 1 ]; then
  echo "[test] ASan/UBSan build of the unit tests"
  cmake -S . -B "$build-asan" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DPERFHAT_SANITIZE=ON \
    -DPERFHAT_BUILD_BENCHMARKS=OFF >/dev/null
  cmake --build "$build-asan" -j"$jobs"
  ASAN_OPTIONS=detect_leaks=1 ctest --test-dir "$build-asan" --output-on-failure -j"$jobs" -L 'unit|fuzz'
fi
echo "[test] all tests passed"
