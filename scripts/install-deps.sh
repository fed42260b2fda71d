#!/usr/bin/env bash
# Installs everything perfhat needs to build and test on a fresh Debian 12 machine.
# Idempotent: packages already present are skipped, so a second run costs a few seconds.
# Set PERFHAT_SKIP_EDITOR_DEPS=1 to leave out the editor-test packages (Neovim, Chromium).
set -euo pipefail

need_root() { if [ "$(id -u)" -ne 0 ]; then echo "sudo"; fi; }
SUDO=$(need_root)

pkgs=(
  build-essential cmake ninja-build pkg-config git ca-certificates
  lld  # the linker of every tree (CMakeLists.txt PERFHAT_LINKER): large test programs link faster
  clang libclang-dev libclang-14-dev libclang-rt-14-dev libfuzzer-14-dev llvm
  nlohmann-json3-dev libcpp-httplib-dev libtsl-hopscotch-map-dev
  libre2-dev libcli11-dev libfmt-dev libsqlite3-dev sqlite3 zlib1g-dev libssl-dev libbrotli-dev libpq-dev postgresql
  libgtest-dev libgmock-dev googletest libbenchmark-dev
  libprotobuf-dev protobuf-compiler  # tests only: OTLP decoder against libprotobuf
  clang-format clang-tidy python3 curl patch
  binutils  # gprof: counts of the dynamic-metrics test (tests/integration/dynamic_gprof_test.cc)
  python3-scipy  # experiment_scipy_compare: every statistic checked against SciPy
  valgrind  # instr_mask_cost_test: instruction counts of a masked probe (callgrind)
  graphviz  # dot: perfhat.showCallGraph renders the call graph as SVG (dot text without it)
  file  # cpack -G DEB: dpkg-shlibdeps (dpkg-dev, from build-essential) is run on what `file` calls ELF
)
if [ "${PERFHAT_SKIP_EDITOR_DEPS:-0}" != 1 ]; then
  pkgs+=(neovim nodejs npm chromium chromium-driver xvfb libkrb5-dev ripgrep fonts-noto-color-emoji tmux)
fi

missing=()
for p in "${pkgs[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    # nodejs/npm may come from outside Debian's packages on some images: accept a working binary.
    case "$p" in
      nodejs) command -v node >/dev/null && continue ;;
      npm) command -v npm >/dev/null && continue ;;
    esac
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "[install-deps] installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "[install-deps] all Debian packages present"
fi
