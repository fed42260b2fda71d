#!/usr/bin/env bash
# CTest driver of the Neovim test: a fresh copy of the sample workspace, a clean Neovim with only
# the plugin on the runtime path, HOME/XDG_* inside a temp folder, nvim_check.lua doing the work.
# Usage: run_nvim_test.sh /path/to/perfhat-lsp [check.lua (default nvim_check.lua)]
# Exit 77 (CTest "skipped") only when PERFHAT_SKIP_EDITOR_TESTS=1, with the reason printed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
server=$(realpath -m "${1:?usage: run_nvim_test.sh /path/to/perfhat-lsp [check.lua]}")
check=$here/${2:-nvim_check.lua}

if [ "${PERFHAT_SKIP_EDITOR_TESTS:-0}" = 1 ]; then
  echo "SKIPPED: Neovim editor test disabled by PERFHAT_SKIP_EDITOR_TESTS=1"
  exit 77
fi
command -v nvim >/dev/null || { echo "FAIL: nvim not installed (run scripts/install-deps.sh)"; exit 1; }
if [ "${2:-}" != nvim_missing_server.lua ] && [ ! -x "$server" ]; then
  echo "FAIL: language server not built: $server (build target perfhat-lsp)"
  exit 1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/perfhat-nvim-test.XXXXXX")
cleanup() { rm -rf "$tmp"; }
trap cleanup EXIT
bash "$here/prepare_workspace.sh" "$tmp/ws"
mkdir -p "$tmp/home" "$tmp/xdg/config" "$tmp/xdg/data" "$tmp/xdg/state" "$tmp/xdg/cache"

echo "nvim: $(nvim --version | head -n1); server: $server; workspace: $tmp/ws"
status=0
HOME=$tmp/home XDG_CONFIG_HOME=$tmp/xdg/config XDG_DATA_HOME=$tmp/xdg/data \
  XDG_STATE_HOME=$tmp/xdg/state XDG_CACHE_HOME=$tmp/xdg/cache \
  PERFHAT_TEST_SERVER=$server PERFHAT_TEST_WORKSPACE=$tmp/ws \
  timeout -k 5 240 nvim --headless --clean --cmd "set rtp^=$repo/editors/neovim" \
  -c "luafile $check" </dev/null || status=$?
if [ $status -ne 0 ]; then
  echo "Neovim test failed (exit $status)"
  for log in "$tmp"/xdg/cache/nvim/lsp.log "$tmp"/xdg/state/nvim/lsp.log; do
    [ -f "$log" ] && { echo "--- $log (tail)"; tail -n 40 "$log"; }
  done
fi
exit $status
