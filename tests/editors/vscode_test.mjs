// Real-VS-Code test of the perfhat extension (reference/real-editors-in-tests.md):
// installs the packaged .vsix into a fresh code-server profile, starts code-server on a free
// loopback port, opens the sample workspace in Debian's Chromium through playwright-core and
// asserts what the editor DOM shows: inlay hints from perfhat-lsp and the hover's statistics.
// Screenshots go to tests/editors/artifacts/. Usage (run_vscode_test.sh does the packaging):
//   node tests/editors/vscode_test.mjs --server /path/to/perfhat-lsp --vsix X.vsix
// Exit 77 (CTest "skipped") only when PERFHAT_SKIP_EDITOR_TESTS=1, with the reason printed.
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../..');

// Tunables: bounded waits, never wall-clock assertions.
const HEALTH_WAIT_MS = 60_000;
const HINT_WAIT_MS = 120_000;
const HOVER_WAIT_MS = 30_000;

function arg(name, fallback) {
  const i = process.argv.indexOf(name);
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : fallback;
}

function log(msg) {
  process.stdout.write(msg + '\n');
}

if (process.env.PERFHAT_SKIP_EDITOR_TESTS === '1') {
  log('SKIPPED: VS Code editor test disabled by PERFHAT_SKIP_EDITOR_TESTS=1');
  process.exit(77);
}

const server = arg('--server');
// hints (default): the full check; missing-server: perfhat.serverPath points nowhere;
// dynamic: production's call graph from the handler at --handler (run_dynamic_test.sh);
// budget: the collection-budget "always trace" lens, the handler holding the service's status.
const scenario = arg('--scenario', 'hints');
const handlerUrl = arg('--handler');
const vsix = arg('--vsix');
const cache = process.env.PERFHAT_EDITORS_CACHE || path.join(repo, '.cache', 'editors');
const codeServer = path.join(cache, 'code-server', 'node_modules', '.bin', 'code-server');
const artifacts = process.env.PERFHAT_EDITOR_ARTIFACTS || path.join(here, 'artifacts');

// Throws; the verdict line is printed once, by main()'s caller.
function fail(msg) {
  throw new Error(msg);
}

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function waitHealthy(port, child) {
  const deadline = Date.now() + HEALTH_WAIT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) fail(`code-server exited early with code ${child.exitCode}`);
    try {
      const res = await fetch(`http://127.0.0.1:${port}/healthz`);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await sleep(250);
  }
  fail(`code-server did not answer /healthz within ${HEALTH_WAIT_MS} ms`);
}

// The editor's visible text, with the non-breaking spaces monaco renders hints with normalised.
async function editorText(page) {
  return page.evaluate(() => {
    const lines = [...document.querySelectorAll('.monaco-editor .view-lines .view-line')];
    return lines.map((l) => l.textContent.replace(/\u00a0/g, ' ')).join('\n');
  });
}

async function waitFor(what, timeoutMs, fn) {
  const deadline = Date.now() + timeoutMs;
  let last;
  while (Date.now() < deadline) {
    last = await fn();
    if (last) return last;
    await sleep(250);
  }
  fail(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

async function main() {
  if (scenario !== 'missing-server' && (!server || !fs.existsSync(server))) fail(`language server not built: ${server} (build target perfhat-lsp)`);
  if (!vsix || !fs.existsSync(vsix)) fail(`extension not packaged: ${vsix} (run editors/vscode/scripts/package.sh)`);
  if (!fs.existsSync(codeServer)) fail(`code-server not installed at ${codeServer}; run scripts/setup-editors.sh`);
  let chromium;
  try {
    ({ chromium } = await import('playwright-core'));
  } catch {
    fail('playwright-core missing: run scripts/setup-editors.sh (npm ci in tests/editors)');
  }

  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'perfhat-vscode-test-'));
  const ws = path.join(root, 'ws');
  const r = spawnSync('bash', [path.join(here, 'prepare_workspace.sh'), ws], { stdio: 'inherit' });
  if (r.status !== 0) fail('prepare_workspace.sh failed');
  for (const d of ['home', 'data/User', 'exts', 'chrome', 'xdg/config', 'xdg/data', 'xdg/cache']) {
    fs.mkdirSync(path.join(root, d), { recursive: true });
  }
  fs.writeFileSync(path.join(root, 'config.yaml'), 'auth: none\ncert: false\n');
  fs.writeFileSync(path.join(root, 'data/User/settings.json'), JSON.stringify({
    'workbench.startupEditor': 'none',
    'extensions.ignoreRecommendations': true,
    'update.mode': 'none',
    'telemetry.telemetryLevel': 'off',
    'workbench.enableExperiments': false,
    'workbench.tips.enabled': false,
    'security.workspace.trust.enabled': false,
    'editor.inlayHints.enabled': 'on',
    'editor.hover.delay': 200,
    'editor.fontSize': 14,
    'editor.minimap.enabled': false,
    'workbench.panel.defaultLocation': 'right',
    'chat.commandCenter.enabled': false,
    'perfhat.serverPath': scenario === 'missing-server' ? path.join(root, 'missing', 'perfhat-lsp') : server,
    ...(scenario === 'dynamic' || scenario === 'budget' ? { 'perfhat.handlerUrl': handlerUrl }
      : { 'perfhat.feedbackFile': path.join(ws, 'feedback.json') }),
    ...(scenario === 'budget' ? { 'perfhat.budget.service': 'shop',
      'perfhat.budget.pinsFile': path.join(root, 'pins') } : {}),
  }, null, 2));
  const env = {
    ...process.env,
    HOME: path.join(root, 'home'),
    XDG_CONFIG_HOME: path.join(root, 'xdg/config'),
    XDG_DATA_HOME: path.join(root, 'xdg/data'),
    XDG_CACHE_HOME: path.join(root, 'xdg/cache'),
    EXTENSIONS_GALLERY: '{}',
  };
  const profile = ['--config', path.join(root, 'config.yaml'), '--user-data-dir', path.join(root, 'data'),
    '--extensions-dir', path.join(root, 'exts')];

  const inst = spawnSync(codeServer, [...profile, '--install-extension', vsix], { env, encoding: 'utf8' });
  if (inst.status !== 0) fail(`--install-extension failed:\n${inst.stdout}\n${inst.stderr}`);
  log(`installed ${path.basename(vsix)} into a fresh profile`);

  const port = await freePort();
  const csLog = fs.openSync(path.join(root, 'code-server.log'), 'w');
  // Own process group, so the extension host and perfhat-lsp it starts go down with it.
  const child = spawn(codeServer, [...profile, '--bind-addr', `127.0.0.1:${port}`, '--auth', 'none',
    '--disable-telemetry', '--disable-update-check', '--disable-workspace-trust', ws],
  { env, stdio: ['ignore', csLog, csLog], detached: true });
  log(`code-server pid ${child.pid} on 127.0.0.1:${port}`);

  let ctx;
  const t0 = Date.now();
  try {
    await waitHealthy(port, child);
    ctx = await chromium.launchPersistentContext(path.join(root, 'chrome'), {
      executablePath: process.env.PERFHAT_CHROMIUM || '/usr/bin/chromium',
      headless: true,
      // Tall enough that the whole sample file is rendered (monaco only renders visible lines).
      viewport: { width: 1280, height: 1120 },
      env,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync',
        '--disable-dev-shm-usage', '--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1'],
    });
    // Loopback only: anything else is aborted.
    await ctx.route('**/*', (route) => {
      const u = new URL(route.request().url());
      if (u.hostname === '127.0.0.1' || u.protocol === 'data:' || u.protocol === 'blob:') return route.continue();
      return route.abort();
    });
    const page = ctx.pages()[0] || await ctx.newPage();
    const fileUri = `vscode-remote://127.0.0.1:${port}${path.join(ws, 'src/catalog.cc')}`;
    const url = `http://127.0.0.1:${port}/?folder=${encodeURIComponent(ws)}` +
      `&payload=${encodeURIComponent(JSON.stringify([['openFile', fileUri]]))}`;
    await page.goto(url);

    if (scenario === 'missing-server') await checkMissingServer(page);
    else if (scenario === 'dynamic') await checkCallGraph(page);
    else if (scenario === 'budget') await checkBudget(page, path.join(root, 'pins'));
    else await checkFeedback(page, t0);
    log(`screenshots in ${artifacts}`);
    log('ALL PASSED');
  } catch (e) {
    if (ctx) {
      try {
        const page = ctx.pages()[0];
        fs.mkdirSync(artifacts, { recursive: true });
        await page.screenshot({ path: path.join(artifacts, 'vscode-failure.png') });
        log('--- editor text at failure:\n' + await editorText(page));
      } catch { /* best effort */ }
    }
    log('--- code-server log (tail):\n' + fs.readFileSync(path.join(root, 'code-server.log'), 'utf8').split('\n').slice(-30).join('\n'));
    const exthost = findLogs(path.join(root, 'data', 'logs'));
    for (const f of exthost) log(`--- ${f} (tail):\n` + fs.readFileSync(f, 'utf8').split('\n').slice(-30).join('\n'));
    throw e;
  } finally {
    if (ctx) await ctx.close().catch(() => {});
    try {
      process.kill(-child.pid, 'SIGTERM');
    } catch { /* already gone */ }
    await sleep(500);
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch { /* already gone */ }
    fs.rmSync(root, { recursive: true, force: true });
  }
}

// The main scenario: hints, status bar, hover, and a regression warning after an edit.
async function checkFeedback(page, t0) {
  // 1. Inlay hints from perfhat-lsp in the editor text.
  const text = await waitFor('the inlay hint "⏱ 1.2 ms" in the editor', HINT_WAIT_MS, async () => {
    const t = await editorText(page);
    return t.includes('⏱ 1.2 ms') && t.includes('≈') ? t : null;
  });
  const callLine = text.split('\n').find((l) => l.includes('catalog_.price('));
  if (!callLine || !callLine.includes('⏱ 1.2 ms')) fail(`hint not on the price() call line: ${callLine}`);
  const loopLine = text.split('\n').find((l) => l.includes('for (const Item &item'));
  if (!loopLine || !loopLine.includes('≈') || !loopLine.includes('5 ×')) fail(`inner loop hint missing: ${loopLine}`);
  log(`PASS: hints visible after ${Date.now() - t0} ms: "${callLine.trim()}" / "${loopLine.trim()}"`);
  fs.mkdirSync(artifacts, { recursive: true });
  await page.screenshot({ path: path.join(artifacts, 'vscode-hints.png') });

  // 2. Status-bar item of the extension.
  const status = await waitFor('the perfhat status-bar item', 20_000, async () => {
    const s = await page.evaluate(() => [...document.querySelectorAll('.statusbar-item')]
      .map((e) => e.textContent || '').find((t) => t.includes('perfhat')));
    return s && !s.includes('starting') ? s : null;
  });
  log(`PASS: status bar: "${status.trim()}"`);

  // 3. Hover over `price` in the call: the statistics appear in the hover widget.
  const token = page.locator('.view-line', { hasText: 'catalog_.price(' })
    .locator('span > span', { hasText: /^price$/ }).first();
  const hover = await waitFor('the hover with p50/p99', HOVER_WAIT_MS, async () => {
    await page.mouse.move(5, 5);
    await token.hover();
    await sleep(800);
    const h = await page.evaluate(() => [...document.querySelectorAll('.monaco-hover')]
      .map((e) => (e.textContent || '').replace(/\u00a0/g, ' ')).join('\n'));
    return h.includes('p50') && h.includes('p99') ? h : null;
  });
  for (const needle of ['1.2 ms', '4 ms']) {
    if (!hover.includes(needle)) fail(`hover lacks "${needle}": ${hover}`);
  }
  log(`PASS: hover shows the statistics (${hover.length} characters)`);
  await page.screenshot({ path: path.join(artifacts, 'vscode-hover.png') });

  // 4. Type a slow call inside the loops, as a developer would: a regression warning appears
  //    (squiggle in the editor) and the new call gets its own hint.
  await page.mouse.move(5, 5);
  await page.keyboard.press('Escape');
  await page.locator('.view-line', { hasText: 'catalog_.price(' }).first().click();
  await page.keyboard.press('End');
  await page.keyboard.press('Enter');
  await page.keyboard.type('catalog_.audit(item.id', { delay: 20 });
  await page.keyboard.press('End');
  await page.keyboard.type(';', { delay: 20 });
  await waitFor('a regression warning squiggle after the edit', HINT_WAIT_MS, async () =>
    (await page.locator('.monaco-editor .squiggly-warning').count()) > 0);
  const edited = await waitFor('a hint on the new audit() call', HINT_WAIT_MS, async () => {
    const l = (await editorText(page)).split('\n').find((x) => x.includes('catalog_.audit('));
    // audit() has data only from another caller: its cost here is a prediction ('~').
    return l && l.includes('~') && l.includes('ms') ? l : null;
  });
  log(`PASS: warning squiggle and hint after the edit: "${edited.trim()}"`);
  await page.screenshot({ path: path.join(artifacts, 'vscode-regression.png') });
}

// Production's call graph (issue #24): the lens over Catalog::price, the hover on its name with
// its caller and the call count, the never-called squiggle on Catalog::audit.
async function checkCallGraph(page) {
  const lens = await waitFor('the call-graph code lens', HINT_WAIT_MS, async () => {
    const lenses = await page.evaluate(() => [...document.querySelectorAll('.codelens-decoration')]
      .map((e) => (e.textContent || '').replace(/\u00a0/g, ' ')));
    return lenses.find((t) => t.includes('calls/h') && t.includes('1 caller / 0 callees'));
  });
  for (const needle of ['self p50 1.2 ms', 'demand #1']) {
    if (!lens.includes(needle)) fail(`lens lacks "${needle}": ${lens}`);
  }
  log(`PASS: call-graph lens: "${lens.trim()}"`);
  fs.mkdirSync(artifacts, { recursive: true });
  await page.screenshot({ path: path.join(artifacts, 'vscode-callgraph-lens.png') });

  await waitFor('the never-called squiggle on audit()', HINT_WAIT_MS, async () =>
    (await page.locator('.monaco-editor .squiggly-info').count()) > 0);
  log('PASS: never-called information squiggle');

  const token = page.locator('.view-line', { hasText: 'Catalog::price' })
    .locator('span > span', { hasText: /^price$/ }).first();
  const hover = await waitFor('the hover with the callers', HOVER_WAIT_MS, async () => {
    await page.mouse.move(5, 5);
    await token.hover();
    await sleep(800);
    const h = await page.evaluate(() => [...document.querySelectorAll('.monaco-hover')]
      .map((e) => (e.textContent || '').replace(/\u00a0/g, ' ')).join('\n'));
    return h.includes('Callers') ? h : null;
  });
  for (const needle of ['shop::OrderService::total(const shop::Order &) const', '180 calls']) {
    if (!hover.includes(needle)) fail(`hover lacks "${needle}": ${hover}`);
  }
  const links = await page.evaluate(() => [...document.querySelectorAll('.monaco-hover a')]
    .map((a) => a.getAttribute('data-href') || a.getAttribute('href') || ''));
  if (!links.some((h) => h.includes('catalog.cc#L38'))) fail(`no link to total()'s definition: ${links}`);
  log('PASS: hover lists the caller with its count and a link to its definition');
  // The section sits below the analysis' hover: scroll the hover down to it for the screenshot.
  // Keyboard: the cursor on the name, "Show Hover" twice focuses the hover, End scrolls it.
  await page.mouse.move(5, 5);
  await token.click();
  for (let i = 0; i < 2; ++i) {
    await page.keyboard.press('Control+K');
    await page.keyboard.press('Control+I');
    await sleep(800);
  }
  await page.keyboard.press('End');
  await sleep(500);
  await page.screenshot({ path: path.join(artifacts, 'vscode-callgraph-hover.png') });
}

// The collection budget (issue #22): the "always trace" lens over Catalog::audit with its stack
// samples' estimate, clicked as a user would; the new plan and its predicted overhead are shown
// at once (a notification), and the pin reaches the pins file libperfhat re-reads.
async function checkBudget(page, pins) {
  const lensText = async () => page.evaluate(() => [...document.querySelectorAll('.codelens-decoration a')]
    .map((e) => (e.textContent || '').replace(/\u00a0/g, ' ')));
  const lens = await waitFor('the collection-budget lens', HINT_WAIT_MS, async () =>
    (await lensText()).find((t) => t.includes('always trace')));
  for (const needle of ['shop::Catalog sampled at 0 %', '≈ 20 ms CPU/s estimated from stack samples']) {
    if (!lens.includes(needle)) fail(`lens lacks "${needle}": ${lens}`);
  }
  log(`PASS: budget lens: "${lens.trim()}"`);
  fs.mkdirSync(artifacts, { recursive: true });
  await page.screenshot({ path: path.join(artifacts, 'vscode-budget-lens.png') });

  await page.locator('.codelens-decoration a', { hasText: 'always trace' }).first().click();
  const toast = await waitFor('the new plan in a notification', HINT_WAIT_MS, async () => {
    const t = await page.evaluate(() => [...document.querySelectorAll('.notification-list-item')]
      .map((e) => (e.textContent || '').replace(/\u00a0/g, ' ')).join('\n'));
    return t.includes('Always trace shop::Catalog::audit') ? t : null;
  });
  for (const needle of ['predicted collector overhead 0.04 % → ', 'shop::Catalog: sampled at 0 % → always traced']) {
    if (!toast.includes(needle)) fail(`notification lacks "${needle}": ${toast}`);
  }
  log('PASS: the new plan and its predicted overhead shown at once');
  await page.screenshot({ path: path.join(artifacts, 'vscode-budget-plan.png') });

  const pinned = await waitFor('the pin in the pins file', HINT_WAIT_MS, async () => {
    const text = fs.existsSync(pins) ? fs.readFileSync(pins, 'utf8') : '';
    return text.includes('always shop::Catalog::audit\n') ? text : null;
  });
  log(`PASS: pin written (${pinned.trim().split('\n').length} line(s))`);
}

// perfhat.serverPath points nowhere: the user gets an error that names the fix, and the status
// bar says so; the editor itself keeps working.
async function checkMissingServer(page) {
  const toast = await waitFor('the missing-server notification', HINT_WAIT_MS, async () => {
    const t = await page.evaluate(() => [...document.querySelectorAll('.notifications-toasts, .notification-list-item')]
      .map((e) => (e.textContent || '').replace(/\u00a0/g, ' ')).join('\n'));
    return t.includes('perfhat-lsp was not found') ? t : null;
  });
  for (const needle of ['cmake --build build --target perfhat-lsp', 'perfhat.serverPath', 'Open Settings']) {
    if (!toast.includes(needle)) fail(`notification lacks "${needle}": ${toast}`);
  }
  log('PASS: missing server reported with the fix');
  const status = await waitFor('the status-bar item', 20_000, async () => page.evaluate(() =>
    [...document.querySelectorAll('.statusbar-item')].map((e) => e.textContent || '')
      .find((t) => t.includes('perfhat'))));
  if (!status.includes('no server')) fail(`status bar: ${status}`);
  log(`PASS: status bar: "${status.trim()}"`);
  const text = await editorText(page);
  if (!text.includes('catalog_.price(') || text.includes('⏱')) fail('editor should show the file without hints');
  fs.mkdirSync(artifacts, { recursive: true });
  await page.screenshot({ path: path.join(artifacts, 'vscode-missing-server.png') });
}

// The extension's output channel (perfhat) and the extension host log, for failure reports.
function findLogs(dir) {
  const out = [];
  const walk = (d) => {
    let entries = [];
    try {
      entries = fs.readdirSync(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (/perfhat|exthost/i.test(e.name)) out.push(p);
    }
  };
  walk(dir);
  return out;
}

main().catch((e) => {
  process.exitCode = 1;
  log('FAIL: ' + (e && e.message ? e.message : String(e)));
});
