// Renders a terminal capture (`tmux capture-pane -e -p`, ANSI SGR colours) as an HTML page, so
// Chromium can turn a real Neovim screen into a PNG for docs/screenshots. Handles the 16/256
// colour and truecolor SGR codes, bold, italic, underline and reverse.
//   node ansi_to_html.mjs capture.ansi > screen.html
import * as fs from 'node:fs';

const base16 = ['#1d1f21', '#cc6666', '#7ea35f', '#d8a657', '#6f98c9', '#b294bb', '#5fa8a8', '#c5c8c6',
  '#666666', '#ff6e67', '#9ec875', '#f0c674', '#81a2be', '#d7a5e5', '#8abeb7', '#ffffff'];

function color256(n) {
  if (n < 16) return base16[n];
  if (n < 232) {
    const i = n - 16;
    const v = [0, 95, 135, 175, 215, 255];
    return `rgb(${v[Math.floor(i / 36)]},${v[Math.floor(i / 6) % 6]},${v[i % 6]})`;
  }
  const g = 8 + (n - 232) * 10;
  return `rgb(${g},${g},${g})`;
}

const DEFAULT_FG = '#d0d0d0';
const DEFAULT_BG = '#1c1c1c';

function escape(s) {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function applySgr(state, params) {
  const p = params.length ? params : [0];
  for (let i = 0; i < p.length; i++) {
    const c = p[i];
    if (c === 0) Object.assign(state, { fg: null, bg: null, bold: false, italic: false, underline: false, reverse: false });
    else if (c === 1) state.bold = true;
    else if (c === 3) state.italic = true;
    else if (c === 4) state.underline = true;
    else if (c === 7) state.reverse = true;
    else if (c === 22) state.bold = false;
    else if (c === 23) state.italic = false;
    else if (c === 24) state.underline = false;
    else if (c === 27) state.reverse = false;
    else if (c >= 30 && c <= 37) state.fg = base16[c - 30];
    else if (c >= 90 && c <= 97) state.fg = base16[c - 90 + 8];
    else if (c >= 40 && c <= 47) state.bg = base16[c - 40];
    else if (c >= 100 && c <= 107) state.bg = base16[c - 100 + 8];
    else if (c === 39) state.fg = null;
    else if (c === 49) state.bg = null;
    else if (c === 38 || c === 48) {
      let col = null;
      if (p[i + 1] === 5) { col = color256(p[i + 2]); i += 2; }
      else if (p[i + 1] === 2) { col = `rgb(${p[i + 2]},${p[i + 3]},${p[i + 4]})`; i += 4; }
      if (c === 38) state.fg = col; else state.bg = col;
    }
  }
}

function render(text) {
  const state = { fg: null, bg: null, bold: false, italic: false, underline: false, reverse: false };
  let html = '';
  let run = '';
  const flush = () => {
    if (!run) return;
    let fg = state.fg || DEFAULT_FG;
    let bg = state.bg || DEFAULT_BG;
    if (state.reverse) [fg, bg] = [bg, fg];
    const style = [`color:${fg}`, `background:${bg}`];
    if (state.bold) style.push('font-weight:bold');
    if (state.italic) style.push('font-style:italic');
    if (state.underline) style.push('text-decoration:underline');
    html += `<span style="${style.join(';')}">${escape(run)}</span>`;
    run = '';
  };
  const re = /\x1b\[([0-9;]*)m/g;
  let last = 0;
  let m;
  while ((m = re.exec(text)) !== null) {
    run += text.slice(last, m.index);
    flush();
    applySgr(state, m[1] === '' ? [] : m[1].split(';').map(Number));
    last = re.lastIndex;
  }
  run += text.slice(last);
  flush();
  return html;
}

const input = fs.readFileSync(process.argv[2], 'utf8').replace(/\n+$/, '');
const body = input.split('\n').map((l) => `<div class="l">${render(l) || ' '}</div>`).join('');
process.stdout.write(`<!doctype html><meta charset="utf-8"><style>
body{margin:0;background:${DEFAULT_BG}}
pre{margin:0;padding:10px;font:15px/1.3 'DejaVu Sans Mono','Noto Color Emoji',monospace;color:${DEFAULT_FG}}
.l{white-space:pre;min-height:1.3em}
</style><pre>${body}</pre>\n`);
