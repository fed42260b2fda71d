// perfhat for VS Code: starts perfhat-lsp for C/C++ files (beside clangd, which keeps doing
// completion and navigation) and adds the commands and the status-bar item around it.
import * as cp from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as vscode from 'vscode';
import {
  DidChangeConfigurationNotification,
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  State,
  TransportKind,
} from 'vscode-languageclient/node';

import { probeHandler } from './health';
import { findCompileCommandsDir, resolveBinary, searchPath, siblingFetchCandidates, isExecutable } from './serverPath';
import { ExtensionSettings, RESTART_SETTINGS, readSettings } from './settings';
import { HandlerState, ServerState, statusText } from './statusText';

const HEALTH_INTERVAL_MS = 30_000;
const STATUS_TICK_MS = 30_000;

let client: LanguageClient | undefined;
let output: vscode.OutputChannel;
let statusItem: vscode.StatusBarItem;
let serverState: ServerState = 'stopped';
let handlerState: HandlerState = 'none';
let lastRefresh: number | undefined;
let serverPath: string | undefined;
let timers: NodeJS.Timeout[] = [];

function workspaceRoot(): string | undefined {
  return vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
}

function settings(): ExtensionSettings {
  const cfg = vscode.workspace.getConfiguration('perfhat');
  // The most specific scope the user set wins; unset settings are not sent (see settings.ts).
  const explicit = (k: string): unknown => {
    const i = cfg.inspect(k);
    return i?.workspaceFolderValue ?? i?.workspaceValue ?? i?.globalValue;
  };
  return readSettings(explicit, workspaceRoot(), os.homedir());
}

function updateStatus(): void {
  const s = settings().server;
  let source: 'handler' | 'file' | 'none' = 'none';
  let dataTime = lastRefresh;
  if (s.handler) {
    source = 'handler';
  } else if (s.feedbackFile) {
    source = 'file';
    try {
      dataTime = fs.statSync(s.feedbackFile).mtimeMs;
    } catch {
      dataTime = undefined;
    }
  }
  const st = statusText({ server: serverState, handler: handlerState, source, dataTime, now: Date.now() });
  statusItem.text = st.text;
  statusItem.tooltip = st.tooltip;
  statusItem.backgroundColor = st.warning ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
  statusItem.show();
}

async function checkHandler(): Promise<void> {
  const s = settings().server;
  handlerState = s.handler ? await probeHandler(s.handler, s.token) : 'none';
  updateStatus();
}

async function missingServer(tried: string[]): Promise<void> {
  serverState = 'missing';
  updateStatus();
  const msg = 'perfhat: the language server perfhat-lsp was not found (looked at: ' + tried.join(', ') +
    '). Build it with `cmake --build build --target perfhat-lsp` and set "perfhat.serverPath" to build/server/perfhat-lsp.';
  output.appendLine(msg);
  const pick = await vscode.window.showErrorMessage(msg, 'Open Settings');
  if (pick === 'Open Settings') {
    await vscode.commands.executeCommand('workbench.action.openSettings', 'perfhat.serverPath');
  }
}

async function startClient(context: vscode.ExtensionContext): Promise<void> {
  const cfg = settings();
  const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);
  const found = resolveBinary('perfhat-lsp', 'server', cfg.serverPath, folders, process.env.PATH);
  if (!found.path) {
    await missingServer(found.tried);
    return;
  }
  serverPath = found.path;
  cfg.problems.forEach((p) => output.appendLine(`settings: ${p}`));
  const serverOptions: ServerOptions = {
    command: found.path,
    args: [],
    transport: TransportKind.stdio,
    options: { cwd: workspaceRoot() },
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: 'file', language: 'c' },
      { scheme: 'file', language: 'cpp' },
    ],
    initializationOptions: cfg.server,
    outputChannel: output,
    // perfhat adds hints, lenses and diagnostics; it must not fight clangd over anything else.
    diagnosticCollectionName: 'perfhat',
    middleware: {
      // Code lenses and code actions run perfhat.showData through the client's generic
      // executeCommand; show its answer instead of dropping it.
      executeCommand: async (command, args, next) => {
        const result = await next(command, args);
        if (command === 'perfhat.showData' && result !== undefined && result !== null) {
          await showDocument(result);
        }
        return result;
      },
    },
  };
  client = new LanguageClient('perfhat', 'perfhat', serverOptions, clientOptions);
  context.subscriptions.push(client.onDidChangeState((e) => {
    serverState = e.newState === State.Running ? 'running' : e.newState === State.Starting ? 'starting' : 'stopped';
    updateStatus();
  }));
  serverState = 'starting';
  updateStatus();
  try {
    await client.start();
    lastRefresh = Date.now();
    output.appendLine(`perfhat-lsp started: ${found.path}`);
  } catch (e) {
    serverState = 'stopped';
    updateStatus();
    vscode.window.showErrorMessage(`perfhat: could not start ${found.path}: ${String(e)}`);
  }
  updateStatus();
}

async function stopClient(): Promise<void> {
  const c = client;
  client = undefined;
  if (c) {
    try {
      await c.stop();
    } catch (e) {
      output.appendLine(`stopping perfhat-lsp: ${String(e)}`);
    }
  }
  serverState = 'stopped';
}

async function runServerCommand(command: string, args: unknown[]): Promise<unknown> {
  if (!client || serverState !== 'running') {
    vscode.window.showWarningMessage('perfhat: the language server is not running.');
    return undefined;
  }
  return client.sendRequest(ExecuteCommandRequest.type, { command, arguments: args });
}

async function refreshFeedback(): Promise<void> {
  await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Window, title: 'perfhat: refreshing feedback' },
    async () => {
      await runServerCommand('perfhat.refresh', []);
      lastRefresh = Date.now();
      await checkHandler();
    });
}

// Asks the server for the code actions at the cursor and runs its "show data" command, whose
// argument is the function key; the answer is shown as JSON in a read-only editor.
async function showRawData(): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (!editor || !client) {
    vscode.window.showInformationMessage('perfhat: open a C/C++ file first.');
    return;
  }
  const actions = await vscode.commands.executeCommand<(vscode.CodeAction | vscode.Command)[]>(
    'vscode.executeCodeActionProvider', editor.document.uri, editor.selection);
  let key: unknown;
  for (const a of actions ?? []) {
    const cmd = (a as vscode.CodeAction).command ?? (a as vscode.Command);
    if (cmd && cmd.command === 'perfhat.showData') {
      key = cmd.arguments?.[0];
      break;
    }
  }
  if (key === undefined) {
    const typed = await vscode.window.showInputBox({
      prompt: 'No production data under the cursor. Function key to show:',
      placeHolder: 'shop::Catalog::price(int) const',
    });
    if (!typed) return;
    key = typed;
  }
  try {
    const result = await runServerCommand('perfhat.showData', [key]);
    if (result !== undefined && result !== null) await showDocument(result);
  } catch (e) {
    // e.g. "no production data for <key>": the server's message says what is missing.
    vscode.window.showWarningMessage(`perfhat: ${e instanceof Error ? e.message : String(e)}`);
  }
}

async function showDocument(result: unknown): Promise<void> {
  const content = typeof result === 'string' ? result : JSON.stringify(result, null, 2);
  const doc = await vscode.workspace.openTextDocument({ content, language: typeof result === 'string' ? 'markdown' : 'json' });
  await vscode.window.showTextDocument(doc, { preview: true, viewColumn: vscode.ViewColumn.Beside });
}

// Bulk-fetches the feedback of every function in the project into the local handler's store
// (perfhat-fetch, DESIGN §12), then refreshes the hints.
async function warmCache(): Promise<void> {
  const cfg = settings();
  const root = workspaceRoot();
  if (!cfg.server.handler) {
    vscode.window.showWarningMessage('perfhat: set "perfhat.handlerUrl" first; the cache is warmed from a handler.');
    return;
  }
  if (!root) return;
  let fetchPath = cfg.fetchPath;
  if (!fetchPath) {
    const candidates = serverPath ? siblingFetchCandidates(serverPath) : [];
    fetchPath = candidates.find(isExecutable) ?? searchPath('perfhat-fetch', process.env.PATH) ?? '';
  }
  if (!fetchPath || !isExecutable(fetchPath)) {
    vscode.window.showErrorMessage('perfhat: perfhat-fetch not found. Build it (`cmake --build build --target perfhat-fetch`) or set "perfhat.fetchPath".');
    return;
  }
  const ccDir = findCompileCommandsDir(root);
  if (!ccDir) {
    vscode.window.showErrorMessage('perfhat: no compile_commands.json in the workspace or its build*/ folders.');
    return;
  }
  const args = ['--handler', cfg.server.handler, '--compile-commands', ccDir];
  if (cfg.server.token) args.push('--token', cfg.server.token);
  output.appendLine(`$ ${fetchPath} ${args.map((a) => (a === cfg.server.token ? '***' : a)).join(' ')}`);
  const code = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: 'perfhat: warming the feedback cache', cancellable: true },
    (_progress, token) => new Promise<number>((resolve) => {
      const child = cp.spawn(fetchPath, args, { cwd: root });
      child.stdout.on('data', (d) => output.append(d.toString()));
      child.stderr.on('data', (d) => output.append(d.toString()));
      token.onCancellationRequested(() => child.kill('SIGTERM'));
      child.on('error', (e) => { output.appendLine(String(e)); resolve(-1); });
      child.on('close', (c) => resolve(c ?? -1));
    }));
  if (code === 0) {
    await refreshFeedback();
    vscode.window.showInformationMessage('perfhat: feedback cache warmed.');
  } else {
    output.show(true);
    vscode.window.showErrorMessage(`perfhat: perfhat-fetch failed (exit ${code}); see the perfhat output.`);
  }
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  output = vscode.window.createOutputChannel('perfhat');
  statusItem = vscode.window.createStatusBarItem('perfhat.status', vscode.StatusBarAlignment.Right, 100);
  statusItem.name = 'perfhat';
  statusItem.command = 'perfhat.refreshFeedback';
  context.subscriptions.push(output, statusItem);

  context.subscriptions.push(
    vscode.commands.registerCommand('perfhat.refreshFeedback', refreshFeedback),
    vscode.commands.registerCommand('perfhat.warmCache', warmCache),
    vscode.commands.registerCommand('perfhat.showRawData', showRawData),
    vscode.commands.registerCommand('perfhat.restartServer', async () => {
      await stopClient();
      await startClient(context);
    }),
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      if (!e.affectsConfiguration('perfhat')) return;
      if (RESTART_SETTINGS.some((s) => e.affectsConfiguration(s)) || !client) {
        await stopClient();
        await startClient(context);
      } else {
        await client.sendNotification(DidChangeConfigurationNotification.type,
          { settings: { perfhat: settings().server } });
      }
      await checkHandler();
    }),
  );
  await startClient(context);
  await checkHandler();
  timers = [setInterval(() => void checkHandler(), HEALTH_INTERVAL_MS),
            setInterval(updateStatus, STATUS_TICK_MS)];
}

export async function deactivate(): Promise<void> {
  timers.forEach(clearInterval);
  timers = [];
  await stopClient();
}
