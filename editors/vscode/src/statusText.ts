// Text of the status-bar item: where the data comes from, how fresh it is, and whether the
// handler answers. Pure, so it is unit-tested without VS Code.

export type ServerState = 'starting' | 'running' | 'stopped' | 'missing';
export type HandlerState = 'ok' | 'down' | 'unauthorized' | 'none';

export interface StatusInput {
  server: ServerState;
  handler: HandlerState;
  source: 'handler' | 'file' | 'none';
  dataTime?: number;  // ms epoch: last refresh from the handler, or the feedback file's mtime
  now: number;
}

export function formatAge(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return 'just now';
  const m = Math.round(s / 60);
  if (m < 60) return `${m} min ago`;
  const h = Math.round(m / 60);
  if (h < 48) return `${h} h ago`;
  return `${Math.round(h / 24)} d ago`;
}

export function statusText(i: StatusInput): { text: string; tooltip: string; warning: boolean } {
  if (i.server === 'missing') {
    return { text: '$(error) perfhat: no server', tooltip: 'perfhat-lsp not found; see the perfhat output', warning: true };
  }
  if (i.server === 'stopped') {
    return { text: '$(debug-stop) perfhat: stopped', tooltip: 'perfhat-lsp is not running', warning: true };
  }
  if (i.server === 'starting') {
    return { text: '$(sync~spin) perfhat', tooltip: 'perfhat-lsp is starting', warning: false };
  }
  const age = i.dataTime !== undefined ? formatAge(i.now - i.dataTime) : 'unknown';
  if (i.source === 'file') {
    return { text: `$(pulse) perfhat: file · ${age}`, tooltip: `Feedback from a file, modified ${age}`, warning: false };
  }
  if (i.source === 'none') {
    return { text: '$(pulse) perfhat: no data source', tooltip: 'Set perfhat.handlerUrl or perfhat.feedbackFile', warning: true };
  }
  switch (i.handler) {
    case 'ok':
      return { text: `$(pulse) perfhat: ${age}`, tooltip: `Handler reachable; data refreshed ${age}`, warning: false };
    case 'unauthorized':
      return { text: '$(lock) perfhat: token rejected', tooltip: 'The handler rejected perfhat.token (401/403); hints come from the cache', warning: true };
    default:
      return { text: `$(warning) perfhat: stale · ${age}`, tooltip: `Handler unreachable; hints come from the cache (refreshed ${age})`, warning: true };
  }
}
