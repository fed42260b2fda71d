// The extension's settings, and their translation into what perfhat-lsp reads from
// initializationOptions and workspace/didChangeConfiguration. Pure (no `vscode` import) so it is
// unit-tested under plain Node.
//
// Only settings the user actually set are sent: editor settings rank above the project's
// `.perfhat.json` (DESIGN §12), so sending our defaults would silently override the project.

// Returns the value the user set for one `perfhat.*` setting (any scope), or undefined.
export type SettingGetter = (section: string) => unknown;

export type Profile = 'design' | 'debug';

// The payload sent to the server: the same JSON shape as `.perfhat.json` (server/server/config.h),
// so the server parses editor settings and project files with one parser.
export interface ServerSettings {
  handler?: string;
  token?: string;
  feedbackFile?: string;
  profile?: Profile;
  features?: { regression_relative?: number; regression_absolute_ns?: number; learn_thresholds?: boolean };
  cache?: { maxEntries?: number; ttlSeconds?: number };
  // The collection budget (docs/collection-budget.md): the service whose status the handler is
  // asked for, or libperfhat's status file read directly, and the pins file the lens writes.
  budgetService?: string;
  budgetStatus?: string;
  budgetPins?: string;
}

export interface ExtensionSettings {
  serverPath: string;
  fetchPath: string;
  server: ServerSettings;
  problems: string[];  // settings ignored because of a wrong value, for the output channel
}

// Expands ${workspaceFolder}, ${userHome} and a leading ~ so settings can be shared in a repo.
export function expandVariables(value: string, workspaceFolder: string | undefined,
                                home: string): string {
  let out = value.replace(/\$\{userHome\}/g, home);
  if (out === '~' || out.startsWith('~/')) {
    out = home + out.slice(1);
  }
  if (workspaceFolder !== undefined) {
    out = out.replace(/\$\{workspaceFolder\}/g, workspaceFolder);
  }
  return out;
}

export function readSettings(get: SettingGetter, workspaceFolder: string | undefined,
                             home: string): ExtensionSettings {
  const problems: string[] = [];
  const str = (k: string): string => {
    const v = get(k);
    if (v === undefined || v === null) return '';
    if (typeof v !== 'string') {
      problems.push(`perfhat.${k} must be a string`);
      return '';
    }
    return expandVariables(v.trim(), workspaceFolder, home);
  };
  const num = (k: string, ok: (n: number) => boolean, what: string): number | undefined => {
    const v = get(k);
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'number' || !Number.isFinite(v) || !ok(v)) {
      problems.push(`perfhat.${k} must be ${what}; ignored`);
      return undefined;
    }
    return v;
  };

  const server: ServerSettings = {};
  const handler = str('handlerUrl');
  if (handler) server.handler = handler.replace(/\/+$/, '');
  const token = str('token');
  if (token) server.token = token;
  const feedbackFile = str('feedbackFile');
  if (feedbackFile) server.feedbackFile = feedbackFile;
  const profile = get('profile');
  if (profile === 'design' || profile === 'debug') server.profile = profile;
  else if (profile !== undefined) problems.push('perfhat.profile must be "design" or "debug"; ignored');

  const features: NonNullable<ServerSettings['features']> = {};
  const rel = num('thresholds.relative', (n) => n >= 0, 'a number ≥ 0');
  if (rel !== undefined) features.regression_relative = rel;
  const absMs = num('thresholds.absoluteMs', (n) => n >= 0, 'a number ≥ 0');
  if (absMs !== undefined) features.regression_absolute_ns = absMs * 1e6;
  const learn = get('thresholds.learn');
  if (typeof learn === 'boolean') features.learn_thresholds = learn;
  if (Object.keys(features).length) server.features = features;

  const cache: NonNullable<ServerSettings['cache']> = {};
  const maxEntries = num('cache.maxEntries', (n) => Number.isInteger(n) && n > 0, 'a positive integer');
  if (maxEntries !== undefined) cache.maxEntries = maxEntries;
  const ttl = num('cache.ttlSeconds', (n) => Number.isInteger(n) && n > 0, 'a positive integer');
  if (ttl !== undefined) cache.ttlSeconds = ttl;
  if (Object.keys(cache).length) server.cache = cache;

  const budgetService = str('budget.service');
  if (budgetService) server.budgetService = budgetService;
  const budgetStatus = str('budget.statusFile');
  if (budgetStatus) server.budgetStatus = budgetStatus;
  const budgetPins = str('budget.pinsFile');
  if (budgetPins) server.budgetPins = budgetPins;

  return { serverPath: str('serverPath'), fetchPath: str('fetchPath'), server, problems };
}

// Settings whose change needs a server restart rather than didChangeConfiguration.
export const RESTART_SETTINGS = ['perfhat.serverPath', 'perfhat.trace.server'];
