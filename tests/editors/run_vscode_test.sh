#!/usr/bin/env bash
# CTest driver of the VS Code test: packages the extension (.vsix), then vscode_test.mjs installs
# it into a fresh code-server profile and checks hints and hover in Chromium.
# Usage: run_vscode_test.sh /path/to/perfhat-lsp [--scenario hints|missing-server]
# Exit 77 (CTest "skipped") only when PERFHAT_SKIP_EDITOR_TESTS=1, with the reason printed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
server=$(realpath -m "${1:?usage: run_vscode_test.sh /path/to/perfhat-lsp}")

if [ "${PERFHAT_SKIP_EDITOR_TESTS:-0}" = 1 ]; then
  echo "SKIPPED: VS Code editor test disabled by PERFHAT_SKIP_EDITOR_TESTS=1"
  exit 77
fi
[ -d "$here/node_modules/playwright-core" ] ||
  { echo "FAIL: playwright-core missing; run scripts/setup-editors.sh"; exit 1; }
bash "$repo/editors/vscode/scripts/package.sh" >/dev/null ||
  { echo "FAIL: packaging the extension failed (bash editors/vscode/scripts/package.sh)"; exit 1; }
version=$(node -p "require('$repo/editors/vscode/package.json').version")
exec node "$here/vscode_test.mjs" --server "$server" \
  --vsix "$repo/editors/vscode/dist/perfhat-$version.vsix" "${@:2}"
