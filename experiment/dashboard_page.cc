#include "experiment/dashboard_page.h"

namespace perfhat::experiment {

// Query parameters of the page: q (search text), minutes (window), key (function to chart).
std::string_view dashboardPage() {
  static constexpr std::string_view kPage = R"HTML(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>perfhat dashboard — average execution time per function</title>
<style>
body{font-family:sans-serif;margin:0;color:#222;background:#fafafa}
header{background:#24323f;color:#fff;padding:10px 16px;font-size:18px}
main{display:flex;gap:16px;padding:12px 16px}
#left{flex:3;min-width:0}#right{flex:2;min-width:320px}
.controls{display:flex;gap:8px;align-items:center;margin-bottom:8px}
#search{flex:1;padding:6px;font-size:14px}
table{border-collapse:collapse;width:100%;background:#fff;font-size:13px}
th,td{border-bottom:1px solid #e3e3e3;padding:5px 8px;text-align:left}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
th{background:#eef1f4;position:sticky;top:0}
tbody tr{cursor:pointer}tbody tr:hover{background:#f3f7fb}tr.selected{background:#dcebf8}
td.key{font-family:monospace;word-break:break-all}
#status{color:#666;font-size:13px}#error{color:#b00020}
.panel{background:#fff;border:1px solid #e3e3e3;padding:8px}
#chart-title{font-family:monospace;font-size:13px;word-break:break-all;margin:4px 0 8px}
</style></head><body>
<header>perfhat dashboard — average execution time per function (production data)</header>
<main><section id="left">
<div class="controls"><input id="search" type="search" placeholder="Search functions (substring)">
<select id="window"><option value="15">last 15 min</option><option value="60">last hour</option>
<option value="1440" selected>last 24 h</option><option value="10080">last 7 days</option></select>
<button id="refresh">Refresh</button></div>
<div id="status">loading…</div><div id="error"></div>
<table id="functions"><thead><tr><th>Function</th><th class="num">Calls</th>
<th class="num">Avg (ms)</th><th class="num">p50 (ms)</th><th class="num">p95 (ms)</th></tr></thead>
<tbody></tbody></table></section>
<section id="right"><div class="panel"><h3>Average execution time over time</h3>
<div id="chart-title">select a function</div><svg id="chart" width="460" height="260"></svg>
</div></section></main>
<script>
'use strict';
const params = new URLSearchParams(location.search);
const state = {rows: [], selected: params.get('key') || ''};
const $ = (id) => document.getElementById(id);
if (params.get('q')) $('search').value = params.get('q');
if (params.get('minutes')) $('window').value = params.get('minutes');
const fmt = (v) => v == null ? '' : v === 0 ? '0' : (v >= 100 ? v.toFixed(0) : v >= 1 ? v.toFixed(2) : v.toPrecision(3));
function text(tag, content, cls) {
  const e = document.createElement(tag); e.textContent = content; if (cls) e.className = cls; return e;
}
function render() {
  const q = $('search').value.trim().toLowerCase();
  const rows = state.rows.filter((r) => r.key.toLowerCase().includes(q));
  const body = $('functions').tBodies[0];
  body.replaceChildren();
  for (const r of rows) {
    const tr = document.createElement('tr');
    tr.dataset.key = r.key;
    if (r.key === state.selected) tr.className = 'selected';
    tr.append(text('td', r.key, 'key'), text('td', r.count, 'num'), text('td', fmt(r.mean_ms), 'num'),
              text('td', fmt(r.p50_ms), 'num'), text('td', fmt(r.p95_ms), 'num'));
    tr.addEventListener('click', () => { state.selected = r.key; render(); loadSeries(); });
    body.append(tr);
  }
  $('status').textContent = rows.length + ' of ' + state.rows.length + ' functions';
}
async function getJson(url) {
  const res = await fetch(url);
  const body = await res.json();
  if (!res.ok) throw new Error(body.error ? body.error.message : res.statusText);
  return body;
}
async function load() {
  try {
    const data = await getJson('/api/functions?minutes=' + $('window').value);
    state.rows = data.functions;
    $('error').textContent = '';
    if (!state.selected && state.rows.length) state.selected = state.rows[0].key;
    render();
    await loadSeries();
  } catch (e) { $('error').textContent = 'handler: ' + e.message; $('status').textContent = ''; }
}
async function loadSeries() {
  if (!state.selected) return;
  const data = await getJson('/api/series?buckets=24&minutes=' + $('window').value +
                             '&key=' + encodeURIComponent(state.selected));
  $('chart-title').textContent = data.key;
  drawChart(data.series);
}
function drawChart(series) {
  const svg = $('chart'), W = 460, H = 260, L = 56, B = 40, T = 10, R = 10;
  const ns = 'http://www.w3.org/2000/svg';
  const el = (tag, attrs, content) => {
    const e = document.createElementNS(ns, tag);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (content != null) e.textContent = content;
    svg.append(e); return e;
  };
  svg.replaceChildren();
  const vals = series.map((p) => p.mean_ms).filter((v) => v != null);
  const max = vals.length ? Math.max(...vals) * 1.1 : 1;
  const x = (i) => L + (W - L - R) * (series.length > 1 ? i / (series.length - 1) : 0.5);
  const y = (v) => T + (H - T - B) * (1 - v / max);
  for (let k = 0; k <= 4; k++) {
    const v = max * k / 4;
    el('line', {x1: L, x2: W - R, y1: y(v), y2: y(v), stroke: '#e3e3e3'});
    el('text', {x: L - 4, y: y(v) + 4, 'text-anchor': 'end', 'font-size': 11}, fmt(v));
  }
  el('text', {x: 12, y: T + (H - T - B) / 2, 'font-size': 11, transform: 'rotate(-90 12 ' + (T + (H - T - B) / 2) + ')', 'text-anchor': 'middle'}, 'avg ms');
  [0, series.length - 1].forEach((i) => {
    if (series[i]) el('text', {x: x(i), y: H - 20, 'text-anchor': i ? 'end' : 'start', 'font-size': 11}, series[i].from.slice(11, 16) + ' UTC');
  });
  let d = '';
  series.forEach((p, i) => {
    if (p.mean_ms == null) { d += ' '; return; }
    d += (d.endsWith(' ') || d === '' ? 'M' : 'L') + x(i).toFixed(1) + ',' + y(p.mean_ms).toFixed(1);
    el('circle', {cx: x(i), cy: y(p.mean_ms), r: 3, fill: '#1f77b4', class: 'point'}).append(
        Object.assign(document.createElementNS(ns, 'title'), {textContent: fmt(p.mean_ms) + ' ms, ' + p.count + ' calls'}));
  });
  el('path', {d: d.trim(), fill: 'none', stroke: '#1f77b4', 'stroke-width': 2, class: 'line'});
}
$('search').addEventListener('input', render);
$('window').addEventListener('change', load);
$('refresh').addEventListener('click', load);
load();
</script></body></html>
)HTML";
  return kPage;
}

}  // namespace perfhat::experiment
