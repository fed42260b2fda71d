#!/usr/bin/env bash
# Builds the extension and packages it as dist/perfhat-<version>.vsix, offline:
# npm ci (only when node_modules is missing or stale), tsc, unit tests, @vscode/vsce package.
set -euo pipefail
cd "$(dirname "$0")/.."
export npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false
version=$(node -p 'require("./package.json").version')
vsix=dist/perfhat-$version.vsix
# Up to date: nothing that goes into the package is newer than it (reruns cost nothing).
if [ -f "$vsix" ] && [ "${PERFHAT_FORCE_PACKAGE:-0}" != 1 ] &&
  [ -z "$(find src package.json package-lock.json tsconfig.json README.md .vscodeignore -newer "$vsix" 2>/dev/null | head -n1)" ]; then
  echo "up to date: $(pwd)/$vsix"
  exit 0
fi
if [ ! -d node_modules/vscode-languageclient ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --ignore-scripts
fi
rm -rf out
npx tsc -p ./
node --test out/test/
mkdir -p dist
npx vsce package --allow-missing-repository --skip-license --no-update-package-json --out "$vsix"
echo "packaged $(pwd)/$vsix"
