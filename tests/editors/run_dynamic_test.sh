#!/usr/bin/env bash
# CTest driver of the call-graph editor tests (issue #24): a fresh sample workspace, a real
# perfhat-handler seeded by dynamic_handler.sh, then the editor's check against it.
# Usage: run_dynamic_test.sh /path/to/perfhat-lsp /path/to/perfhat-handler nvim|vscode [budget]
# With `budget`: the handler also holds the service's collection-budget status
# (budget_status.json, issue #22) and the editor checks the "always trace" lens instead
# (nvim_budget.lua; vscode_test.mjs --scenario budget).
# Exit 77 (CTest "skipped") only when PERFHAT_SKIP_EDITOR_TESTS=1, with the reason printed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
server=$(realpath -m "${1:?usage: run_dynamic_test.sh LSP HANDLER nvim|vscode}")
handler=$(realpath -m "${2:?usage: run_dynamic_test.sh LSP HANDLER nvim|vscode}")
editor=${3:?usage: run_dynamic_test.sh LSP HANDLER nvim|vscode [budget]}
check=nvim_dynamic.lua
scenario=dynamic

if [ "${PERFHAT_SKIP_EDITOR_TESTS:-0}" = 1 ]; then
  echo "SKIPPED: editor test disabled by PERFHAT_SKIP_EDITOR_TESTS=1"
  exit 77
fi
[ -x "$server" ] || { echo "FAIL: language server not built: $server"; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/perfhat-dynamic-editor.XXXXXX")
cleanup() {
  [ -f "$tmp/h/handler.pid" ] && kill "$(cat "$tmp/h/handler.pid")" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
url=$(bash "$here/dynamic_handler.sh" "$handler" "$tmp/h")
echo "handler $url seeded"
if [ "${4:-}" = budget ]; then
  curl -sf -X POST -H 'Content-Type: application/json' --data-binary @"$here/budget_status.json" \
    "$url/v1/budget" >/dev/null || { echo "FAIL: the handler refused the budget status"; exit 1; }
  check=nvim_budget.lua
  scenario=budget
fi

case $editor in
  nvim)
    command -v nvim >/dev/null || { echo "FAIL: nvim not installed (run scripts/install-deps.sh)"; exit 1; }
    bash "$here/prepare_workspace.sh" "$tmp/ws"
    mkdir -p "$tmp/home" "$tmp/xdg/config" "$tmp/xdg/data" "$tmp/xdg/state" "$tmp/xdg/cache"
    HOME=$tmp/home XDG_CONFIG_HOME=$tmp/xdg/config XDG_DATA_HOME=$tmp/xdg/data \
      XDG_STATE_HOME=$tmp/xdg/state XDG_CACHE_HOME=$tmp/xdg/cache \
      PERFHAT_TEST_SERVER=$server PERFHAT_TEST_WORKSPACE=$tmp/ws PERFHAT_TEST_HANDLER=$url \
      PERFHAT_TEST_PINS=$tmp/pins \
      timeout -k 5 240 nvim --headless --clean --cmd "set rtp^=$repo/editors/neovim" \
      -c "luafile $here/$check" </dev/null
    ;;
  vscode)
    [ -d "$here/node_modules/playwright-core" ] ||
      { echo "FAIL: playwright-core missing; run scripts/setup-editors.sh"; exit 1; }
    bash "$repo/editors/vscode/scripts/package.sh" >/dev/null ||
      { echo "FAIL: packaging the extension failed"; exit 1; }
    version=$(node -p "require('$repo/editors/vscode/package.json').version")
    node "$here/vscode_test.mjs" --server "$server" --scenario "$scenario" --handler "$url" \
      --vsix "$repo/editors/vscode/dist/perfhat-$version.vsix"
    ;;
  *) echo "unknown editor: $editor"; exit 2 ;;
esac
