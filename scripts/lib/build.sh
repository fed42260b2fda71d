# The build tree the long-mode scripts (realcode.sh, reliability.sh) use. Source it; it sets
# build to PERFHAT_BUILD_DIR (default: build) and provides:
#
#   build_targets JOBS TARGET...   configures $build (RelWithDebInfo, Ninja) when it has no
#                                  CMakeCache.txt yet, then builds the TARGETs with JOBS jobs.
build=${PERFHAT_BUILD_DIR:-build}

build_targets() {
  local jobs=$1; shift
  if [ ! -f "$build/CMakeCache.txt" ]; then
    cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
  fi
  cmake --build "$build" -j "$jobs" --target "$@"
}
