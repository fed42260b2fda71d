#!/usr/bin/env bash
# Regenerates the call-graph screenshots of docs/screenshots/ (issue #24) from the real editors
# on the sample workspace, against a real perfhat-handler seeded by dynamic_handler.sh:
#   nvim-callgraph.png          Neovim (in tmux): the call-graph lenses, the never-called
#                               diagnostic and the hover on Catalog::price listing its caller
#   vscode-callgraph-lens.png, vscode-callgraph-hover.png   from the VS Code test (scenario dynamic)
# Usage: tests/editors/dynamic_screenshots.sh /path/to/perfhat-lsp /path/to/perfhat-handler
# Needs tmux, nvim, node, /usr/bin/chromium, and scripts/setup-editors.sh for the VS Code part.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
server=$(realpath -m "${1:?usage: dynamic_screenshots.sh LSP HANDLER}")
handler=$(realpath -m "${2:?usage: dynamic_screenshots.sh LSP HANDLER}")
out=$repo/docs/screenshots
mkdir -p "$out"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/perfhat-callgraph-shots.XXXXXX")
session=perfhat-callgraph-$$
cleanup() {
  tmux kill-session -t "$session" 2>/dev/null || true
  [ -f "$tmp/h/handler.pid" ] && kill "$(cat "$tmp/h/handler.pid")" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
url=$(bash "$here/dynamic_handler.sh" "$handler" "$tmp/h")
bash "$here/prepare_workspace.sh" "$tmp/ws"
mkdir -p "$tmp/home" "$tmp/xdg"

printf '%s\n' \
  "vim.opt.rtp:prepend('$repo/editors/neovim')" \
  "vim.o.termguicolors = false" \
  "vim.o.number = true" \
  "vim.o.signcolumn = 'auto'" \
  "vim.cmd('highlight SignColumn ctermbg=NONE')" \
  "vim.o.laststatus = 2" \
  "vim.cmd('highlight NormalFloat ctermbg=NONE ctermfg=NONE')" \
  "require('perfhat').setup{ cmd = { '$server', '--handler', '$url' } }" >"$tmp/init.lua"

cols=150 rows=50
source "$here/screenshot_lib.sh"
open_in_nvim 22 "$tmp/ws/src/catalog.cc"
capture_when 'calls/h' "$tmp/lens.ansi"
# The cursor on price's name in its definition, then the hover.
tmux send-keys -t "$session" ':26' Enter '0f:ll' ':lua vim.lsp.buf.hover()' Enter
capture_when 'Callers' "$tmp/callgraph.ansi"
render_png "$tmp/callgraph.ansi" "$out/nvim-callgraph.png" "$cols" "$rows"

if [ "${PERFHAT_SCREENSHOTS_NO_VSCODE:-0}" != 1 ]; then
  PERFHAT_EDITOR_ARTIFACTS=$tmp/vscode bash "$here/run_dynamic_test.sh" "$server" "$handler" vscode
  cp "$tmp/vscode/vscode-callgraph-lens.png" "$tmp/vscode/vscode-callgraph-hover.png" "$out/"
  echo "wrote $out/vscode-callgraph-{lens,hover}.png"
fi
