#!/usr/bin/env bash
# CTest driver of the extension's unit tests (settings, binary lookup, status text): tsc + node --test.
set -euo pipefail
cd "$(dirname "$0")/../../editors/vscode"
if [ "${PERFHAT_SKIP_EDITOR_TESTS:-0}" = 1 ]; then
  echo "SKIPPED: VS Code extension tests disabled by PERFHAT_SKIP_EDITOR_TESTS=1"
  exit 77
fi
[ -x node_modules/.bin/tsc ] || { echo "FAIL: editors/vscode/node_modules missing; run scripts/setup-editors.sh"; exit 1; }
node_modules/.bin/tsc -p ./
exec node --test out/test/
