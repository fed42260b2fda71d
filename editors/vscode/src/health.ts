// Handler liveness for the status bar: GET <handlerUrl>/healthz over plain HTTP(S) with a short
// timeout, never blocking the editor.
import * as http from 'http';
import * as https from 'https';
import { HandlerState } from './statusText';

export function probeHandler(baseUrl: string, token: string | undefined,
                             timeoutMs = 2000): Promise<HandlerState> {
  return new Promise((resolve) => {
    let url: URL;
    try {
      url = new URL(baseUrl.replace(/\/+$/, '') + '/healthz');
    } catch {
      resolve('down');
      return;
    }
    const lib = url.protocol === 'https:' ? https : http;
    const headers: Record<string, string> = {};
    if (token) headers['Authorization'] = `Bearer ${token}`;
    const req = lib.get(url, { headers, timeout: timeoutMs }, (res) => {
      res.resume();
      const code = res.statusCode ?? 0;
      if (code === 401 || code === 403) resolve('unauthorized');
      else resolve(code >= 200 && code < 300 ? 'ok' : 'down');
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve('down'));
  });
}
