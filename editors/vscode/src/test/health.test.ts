// probeHandler against a real HTTP server on loopback (port 0), and against a closed port.
import * as assert from 'node:assert/strict';
import * as http from 'node:http';
import { AddressInfo } from 'node:net';
import { test } from 'node:test';

import { probeHandler } from '../health';

function serve(handler: http.RequestListener): Promise<{ url: string; close: () => Promise<void> }> {
  return new Promise((resolve) => {
    const srv = http.createServer(handler);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as AddressInfo;
      resolve({ url: `http://127.0.0.1:${port}`, close: () => new Promise((r) => srv.close(() => r())) });
    });
  });
}

test('healthy handler, token sent as bearer', async () => {
  let auth: string | undefined;
  let path: string | undefined;
  const s = await serve((req, res) => { auth = req.headers.authorization; path = req.url; res.end('ok'); });
  try {
    assert.equal(await probeHandler(s.url + '/', 'tok'), 'ok');
    assert.equal(auth, 'Bearer tok');
    assert.equal(path, '/healthz');
  } finally {
    await s.close();
  }
});

test('401 means the token was rejected, 503 means down', async () => {
  let status = 401;
  const s = await serve((_req, res) => { res.statusCode = status; res.end('{}'); });
  try {
    assert.equal(await probeHandler(s.url, 'bad'), 'unauthorized');
    status = 503;
    assert.equal(await probeHandler(s.url, undefined), 'down');
  } finally {
    await s.close();
  }
});

test('nothing listening or a bad URL is down, not an exception', async () => {
  const s = await serve((_req, res) => res.end());
  const url = s.url;
  await s.close();
  assert.equal(await probeHandler(url, undefined, 500), 'down');
  assert.equal(await probeHandler('not a url', undefined), 'down');
});
