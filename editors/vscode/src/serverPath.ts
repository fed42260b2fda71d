// Finds the perfhat-lsp / perfhat-fetch binaries. Pure Node (no `vscode`), unit-tested.
import * as fs from 'fs';
import * as path from 'path';

export function isExecutable(file: string): boolean {
  try {
    const st = fs.statSync(file);
    if (!st.isFile()) return false;
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export function searchPath(name: string, envPath: string | undefined): string | undefined {
  for (const dir of (envPath ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

export interface Resolution {
  path?: string;
  tried: string[];  // every location looked at, for the "not found" message
}

// Order: explicit setting → PATH → <workspace>/build/<subdir>/<name>.
export function resolveBinary(name: string, subdir: string, configured: string,
                              workspaceFolders: string[], envPath: string | undefined): Resolution {
  const tried: string[] = [];
  if (configured) {
    // A relative setting is relative to the (first) workspace folder, not to VS Code's cwd.
    const abs = path.isAbsolute(configured) || workspaceFolders.length === 0
      ? configured : path.resolve(workspaceFolders[0], configured);
    tried.push(abs);
    return { path: isExecutable(abs) ? abs : undefined, tried };
  }
  tried.push(`${name} on PATH`);
  const onPath = searchPath(name, envPath);
  if (onPath) return { path: onPath, tried };
  for (const ws of workspaceFolders) {
    const candidate = path.join(ws, 'build', subdir, name);
    tried.push(candidate);
    if (isExecutable(candidate)) return { path: candidate, tried };
  }
  return { tried };
}

// perfhat-fetch lives in the same build tree as perfhat-lsp (build/feedback-handler/).
export function siblingFetchCandidates(serverPath: string): string[] {
  const buildDir = path.dirname(path.dirname(serverPath));
  return [path.join(buildDir, 'feedback-handler', 'perfhat-fetch'),
          path.join(path.dirname(serverPath), 'perfhat-fetch')];
}

// Nearest folder holding compile_commands.json: the workspace root, then build*/ below it.
export function findCompileCommandsDir(workspaceFolder: string): string | undefined {
  if (fs.existsSync(path.join(workspaceFolder, 'compile_commands.json'))) return workspaceFolder;
  let entries: string[] = [];
  try {
    entries = fs.readdirSync(workspaceFolder).filter((e) => e.startsWith('build')).sort();
  } catch {
    return undefined;
  }
  for (const e of entries) {
    const dir = path.join(workspaceFolder, e);
    if (fs.existsSync(path.join(dir, 'compile_commands.json'))) return dir;
  }
  return undefined;
}
