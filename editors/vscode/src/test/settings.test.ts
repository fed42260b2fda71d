// Unit tests of the extension's pure parts (settings translation, binary lookup, status text).
// Run: npm test (tsc + node --test).
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';

import { findCompileCommandsDir, resolveBinary } from '../serverPath';
import { expandVariables, readSettings, SettingGetter } from '../settings';
import { formatAge, statusText } from '../statusText';

function getter(values: Record<string, unknown>): SettingGetter {
  return (k: string) => values[k];
}

test('nothing set: nothing sent, so .perfhat.json and the server defaults apply', () => {
  const s = readSettings(getter({}), '/ws', '/home/u');
  assert.deepEqual(s.server, {});
  assert.equal(s.serverPath, '');
  assert.deepEqual(s.problems, []);
});

test('set values are translated to the server config shape, variables expanded', () => {
  const s = readSettings(getter({
    serverPath: '${workspaceFolder}/build/server/perfhat-lsp',
    handlerUrl: 'http://127.0.0.1:4319/',
    token: ' secret ',
    feedbackFile: '~/data/f.json',
    profile: 'design',
    'thresholds.relative': 0.5,
    'thresholds.absoluteMs': 5,
    'thresholds.learn': false,
    'cache.maxEntries': 200,
    'cache.ttlSeconds': 60,
    'budget.service': ' shop ',
    'budget.statusFile': '${workspaceFolder}/budget.json',
    'budget.pinsFile': '~/pins',
  }), '/ws', '/home/u');
  assert.equal(s.serverPath, '/ws/build/server/perfhat-lsp');
  assert.deepEqual(s.server, {
    handler: 'http://127.0.0.1:4319',
    token: 'secret',
    feedbackFile: '/home/u/data/f.json',
    profile: 'design',
    features: { regression_relative: 0.5, regression_absolute_ns: 5e6, learn_thresholds: false },
    cache: { maxEntries: 200, ttlSeconds: 60 },
    budgetService: 'shop',
    budgetStatus: '/ws/budget.json',
    budgetPins: '/home/u/pins',
  });
});

test('wrong values are left out and reported', () => {
  const s = readSettings(getter({
    profile: 'everything', 'thresholds.relative': -3, 'cache.maxEntries': 2.5, token: 42,
    'budget.pinsFile': ['a'],
  }), undefined, '/h');
  assert.deepEqual(s.server, {});
  assert.equal(s.problems.length, 5);
  assert.match(s.problems.join('\n'), /perfhat.budget.pinsFile must be a string/);
  assert.match(s.problems.join('\n'), /perfhat.profile/);
  assert.match(s.problems.join('\n'), /cache.maxEntries/);
});

test('expandVariables leaves ${workspaceFolder} alone without a workspace', () => {
  assert.equal(expandVariables('${workspaceFolder}/x', undefined, '/h'), '${workspaceFolder}/x');
  assert.equal(expandVariables('${userHome}/x', undefined, '/h'), '/h/x');
});

test('resolveBinary: setting, then PATH, then build/ in the workspace, listing what it tried', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'perfhat-ext-'));
  try {
    const ws = path.join(dir, 'ws');
    const bin = path.join(ws, 'build', 'server', 'perfhat-lsp');
    fs.mkdirSync(path.dirname(bin), { recursive: true });
    let r = resolveBinary('perfhat-lsp', 'server', '', [ws], '');
    assert.equal(r.path, undefined);
    assert.ok(r.tried.includes(bin));
    fs.writeFileSync(bin, '#!/bin/sh\n', { mode: 0o755 });
    r = resolveBinary('perfhat-lsp', 'server', '', [ws], '');
    assert.equal(r.path, bin);
    const other = path.join(dir, 'bin');
    fs.mkdirSync(other);
    fs.writeFileSync(path.join(other, 'perfhat-lsp'), '#!/bin/sh\n', { mode: 0o755 });
    assert.equal(resolveBinary('perfhat-lsp', 'server', '', [ws], other).path, path.join(other, 'perfhat-lsp'));
    // A configured path wins and is not second-guessed when it is wrong.
    r = resolveBinary('perfhat-lsp', 'server', path.join(dir, 'nope'), [ws], other);
    assert.equal(r.path, undefined);
    assert.deepEqual(r.tried, [path.join(dir, 'nope')]);
    // A relative setting is resolved against the workspace folder.
    assert.equal(resolveBinary('perfhat-lsp', 'server', 'build/server/perfhat-lsp', [ws], '').path, bin);
    // Not executable → not found.
    fs.chmodSync(bin, 0o644);
    assert.equal(resolveBinary('perfhat-lsp', 'server', bin, [ws], '').path, undefined);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('findCompileCommandsDir prefers the root, then build*/', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'perfhat-ext-'));
  try {
    assert.equal(findCompileCommandsDir(dir), undefined);
    fs.mkdirSync(path.join(dir, 'build-rel'));
    fs.writeFileSync(path.join(dir, 'build-rel', 'compile_commands.json'), '[]');
    assert.equal(findCompileCommandsDir(dir), path.join(dir, 'build-rel'));
    fs.writeFileSync(path.join(dir, 'compile_commands.json'), '[]');
    assert.equal(findCompileCommandsDir(dir), dir);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('status text reflects source, freshness and handler state', () => {
  const now = 10 * 3600 * 1000;
  assert.equal(formatAge(5000), 'just now');
  assert.equal(formatAge(5 * 60 * 1000), '5 min ago');
  assert.equal(formatAge(3 * 3600 * 1000), '3 h ago');
  assert.match(statusText({ server: 'running', handler: 'ok', source: 'handler', dataTime: now - 120000, now }).text, /2 min ago/);
  const down = statusText({ server: 'running', handler: 'down', source: 'handler', dataTime: now, now });
  assert.match(down.text, /stale/);
  assert.equal(down.warning, true);
  assert.match(statusText({ server: 'running', handler: 'unauthorized', source: 'handler', now }).text, /token/);
  assert.match(statusText({ server: 'running', handler: 'none', source: 'file', dataTime: now, now }).text, /file · just now/);
  assert.match(statusText({ server: 'missing', handler: 'none', source: 'none', now }).text, /no server/);
});
