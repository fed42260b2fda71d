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

# Waits until the pane shows $1 (bounded), then saves it as ANSI text in $2.
capture_when() {
  local needle=$1 file=$2
  for _ in $(seq 1 120); do
    if tmux capture-pane -t "$session" -p | grep -qF "$needle"; then
      sleep 1
      tmux capture-pane -t "$session" -e -p >"$file"
      return 0
    fi
    sleep 0.5
  done
  echo "screenshots: '$needle' never appeared in Neovim; pane was:" >&2
  tmux capture-pane -t "$session" -p >&2
  return 1
}

render_png() {
  local ansi=$1 png=$2 cols=$3 rows=$4
  node "$here/ansi_to_html.mjs" "$ansi" >"$tmp/screen.html"
  local w=$((cols * 9 + 24)) h=$((rows * 39 / 2 + 22))
  /usr/bin/chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --disable-background-networking --user-data-dir="$tmp/chrome" \
    --window-size="$w,$h" --screenshot="$png" "file://$tmp/screen.html" >/dev/null 2>&1
  echo "wrote $png"
}

cols=150 rows=50
tmux new-session -d -s "$session" -x "$cols" -y "$rows" \
  "env HOME=$tmp/home XDG_STATE_HOME=$tmp/xdg XDG_CACHE_HOME=$tmp/xdg XDG_DATA_HOME=$tmp/xdg TERM=tmux-256color nvim --clean -u $tmp/init.lua +38 $tmp/ws/src/catalog.cc"
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
