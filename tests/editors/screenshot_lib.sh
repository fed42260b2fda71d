# What the Neovim screenshot scripts (screenshots.sh, dynamic_screenshots.sh) share. Source it
# after setting here (this folder), tmp (a scratch directory with init.lua, home/ and xdg/),
# session (the tmux session's name), cols and rows.

# Opens FILE at LINE in Neovim (init.lua from $tmp) inside a detached tmux session.
open_in_nvim() {
  local line=$1 file=$2
  tmux new-session -d -s "$session" -x "$cols" -y "$rows" \
    "env HOME=$tmp/home XDG_STATE_HOME=$tmp/xdg XDG_CACHE_HOME=$tmp/xdg XDG_DATA_HOME=$tmp/xdg TERM=tmux-256color nvim --clean -u $tmp/init.lua +$line $file"
}

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

# Renders the ANSI capture $1 of a COLS x ROWS pane ($3, $4) as the PNG $2 (headless Chromium).
render_png() {
  local ansi=$1 png=$2 cols=$3 rows=$4
  node "$here/ansi_to_html.mjs" "$ansi" >"$tmp/screen.html"
  local w=$((cols * 9 + 24)) h=$((rows * 39 / 2 + 22))
  /usr/bin/chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --disable-background-networking --user-data-dir="$tmp/chrome" \
    --window-size="$w,$h" --screenshot="$png" "file://$tmp/screen.html" >/dev/null 2>&1
  echo "wrote $png"
}
