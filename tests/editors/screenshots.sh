#!/usr/bin/env bash
# Regenerates docs/screenshots/ from the real editors on the sample workspace:
#   nvim-hints.png       Neovim (in tmux) with perfhat hints, lenses and diagnostics
#   nvim-regression.png  the same after adding a slow call inside the loops
#   vscode-hints.png, vscode-hover.png, vscode-regression.png  from the VS Code test
# Usage: tests/editors/screenshots.sh /path/to/perfhat-lsp
# Needs tmux, nvim, node, /usr/bin/chromium, and scripts/setup-editors.sh for the VS Code part.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
server=$(realpath -m "${1:?usage: screenshots.sh /path/to/perfhat-lsp}")
out=$repo/docs/screenshots
mkdir -p "$out"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/perfhat-shots.XXXXXX")
session=perfhat-shot-$$
cleanup() {
  tmux kill-session -t "$session" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
bash "$here/prepare_workspace.sh" "$tmp/ws"
mkdir -p "$tmp/home" "$tmp/xdg"

cat >"$tmp/init.lua" <<EOF
vim.opt.rtp:prepend('$repo/editors/neovim')
vim.o.termguicolors = false
vim.o.number = true
vim.o.signcolumn = 'auto'
vim.cmd('highlight SignColumn ctermbg=NONE')
vim.o.laststatus = 2
vim.o.updatetime = 300
require('perfhat').setup{ cmd = { '$server', '--feedback-file', '$tmp/ws/feedback.json' } }
EOF

cols=150 rows=50
source "$here/screenshot_lib.sh"
open_in_nvim 38 "$tmp/ws/src/catalog.cc"
capture_when '≈' "$tmp/hints.ansi"
# Move to the call inside the loops and add a slow call below it, as a developer would.
tmux send-keys -t "$session" ':42' Enter 'o'
tmux send-keys -t "$session" -l 'catalog_.audit(item.id)\;'
tmux send-keys -t "$session" Escape
capture_when 'Predicted' "$tmp/regression.ansi" || capture_when 'predicted' "$tmp/regression.ansi"
render_png "$tmp/hints.ansi" "$out/nvim-hints.png" "$cols" "$rows"
render_png "$tmp/regression.ansi" "$out/nvim-regression.png" "$cols" "$rows"

if [ "${PERFHAT_SCREENSHOTS_NO_VSCODE:-0}" != 1 ]; then
  PERFHAT_EDITOR_ARTIFACTS=$tmp/vscode bash "$here/run_vscode_test.sh" "$server"
  cp "$tmp/vscode/vscode-hints.png" "$tmp/vscode/vscode-hover.png" "$tmp/vscode/vscode-regression.png" "$out/"
  echo "wrote $out/vscode-{hints,hover,regression}.png"
fi
