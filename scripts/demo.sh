#!/usr/bin/env bash
# The README's main command: the end-to-end demo on embedded defaults.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)"
echo "The end-to-end demo is not complete yet: the server, handlers and sample service are being built."
