#!/usr/bin/env bash
# Prepares the real-editor tests (DESIGN §8, reference/real-editors-in-tests.md):
#   * code-server (VS Code in a browser) from the npm registry, installed offline-safe: scripts
#     off, native modules built against Debian's Node headers, ripgrep taken from Debian;
#   * playwright-core for tests/editors (drives Debian's Chromium; never downloads a browser);
#   * the VS Code extension's npm dependencies, compiled and packaged as a .vsix.
# Idempotent and cached: the code-server tree lives in $PERFHAT_EDITORS_CACHE (default
# .cache/editors in the repo, git-ignored) behind a stamp file, so a rerun costs seconds.
# Called by scripts/test.sh unless PERFHAT_SKIP_EDITOR_TESTS=1.
#   PERFHAT_CODE_SERVER_VERSION  code-server release (default 4.100.3 = VS Code 1.100.3, Node 20)
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

if [ "${PERFHAT_SKIP_EDITOR_TESTS:-0}" = 1 ]; then
  echo "[setup-editors] skipped: PERFHAT_SKIP_EDITOR_TESTS=1"
  exit 0
fi

cache=${PERFHAT_EDITORS_CACHE:-$repo/.cache/editors}
version=${PERFHAT_CODE_SERVER_VERSION:-4.100.3}
cs_dir=$cache/code-server-$version
log=$cache/setup.log
mkdir -p "$cache"
: >"$log"

die() {
  echo "[setup-editors] ERROR: $*" >&2
  echo "[setup-editors] last lines of $log:" >&2
  tail -n 20 "$log" >&2 || true
  exit 1
}
step() { echo "[setup-editors] $*"; }

for tool in node npm nvim /usr/bin/chromium rg; do
  command -v "$tool" >/dev/null || die "'$tool' not found; run scripts/install-deps.sh first"
done

# npm's bundled node-gyp; with nodedir=/usr it uses /usr/include/node and downloads nothing.
npm_root=$(dirname "$(readlink -f "$(command -v npm)")")/..
node_gyp=$npm_root/node_modules/node-gyp/bin/node-gyp.js
[ -f "$node_gyp" ] || die "node-gyp not found at $node_gyp"
[ -f /usr/include/node/node.h ] || die "Node headers missing in /usr/include/node (apt: libnode-dev)"
export npm_config_nodedir=/usr
export npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false

# code-server's engines.node must match this machine's Node major version.
node_major=$(node -p 'process.versions.node.split(".")[0]')

install_code_server() {
  local tmp=$cs_dir.tmp
  rm -rf "$tmp"
  mkdir -p "$tmp"
  cd "$tmp"
  echo '{"private":true}' >package.json
  step "npm install code-server@$version (scripts off)"
  npm install --ignore-scripts --no-save "code-server@$version" >>"$log" 2>&1 ||
    die "npm install code-server@$version failed"
  local want
  want=$(node -p 'require("./node_modules/code-server/package.json").engines.node')
  [ "$want" = "$node_major" ] || [ "$want" = ">=$node_major" ] ||
    die "code-server $version wants Node $want, this machine has Node $node_major; set PERFHAT_CODE_SERVER_VERSION"

  step "building argon2 from source"
  (cd node_modules/argon2 && npm_config_node_gyp=$node_gyp ../.bin/node-pre-gyp install \
    --build-from-source) >>"$log" 2>&1 || die "argon2 build failed"

  local vs=node_modules/code-server/lib/vscode
  step "installing VS Code's runtime modules"
  (cd "$vs" && npm install --omit=dev --ignore-scripts) >>"$log" 2>&1 ||
    die "npm install in lib/vscode failed"
  local m
  for m in kerberos @vscode/deviceid @vscode/spdlog native-watchdog node-pty; do
    step "building native module $m"
    (cd "$vs/node_modules/$m" && node "$node_gyp" rebuild --nodedir=/usr) >>"$log" 2>&1 ||
      die "native build of $m failed"
  done
  # The postinstall would download ripgrep; Debian's is the same tool.
  mkdir -p "$vs/node_modules/@vscode/ripgrep/bin"
  cp "$(command -v rg)" "$vs/node_modules/@vscode/ripgrep/bin/rg"
  # The postinstall's symlinks.
  (cd "$vs" && ln -sfn node_modules node_modules.asar &&
    ln -sfn code-linux.sh bin/remote-cli/code-server &&
    ln -sfn browser-linux.sh bin/helpers/browser.sh)
  step "installing built-in extensions' modules"
  (cd "$vs/extensions" && npm install --omit=dev --ignore-scripts && node postinstall.mjs) \
    >>"$log" 2>&1 || die "built-in extensions install failed"
  cd "$repo"
  rm -rf "$cs_dir"
  mv "$tmp" "$cs_dir"
  echo "$version" >"$cs_dir/.complete"
}

if [ -f "$cs_dir/.complete" ] && [ -x "$cs_dir/node_modules/.bin/code-server" ]; then
  step "code-server $version cached in $cs_dir"
else
  install_code_server
  step "code-server $version installed in $cs_dir"
fi
ln -sfn "code-server-$version" "$cache/code-server"

# Test driver dependencies (playwright-core only: the browser is Debian's Chromium).
if [ ! -d tests/editors/node_modules/playwright-core ] ||
  [ tests/editors/package-lock.json -nt tests/editors/node_modules/.package-lock.json ]; then
  step "npm ci in tests/editors"
  (cd tests/editors && npm ci --ignore-scripts) >>"$log" 2>&1 || die "npm ci in tests/editors failed"
fi

# The extension: dependencies, tsc, vsce package (offline).
step "packaging the VS Code extension"
bash editors/vscode/scripts/package.sh >>"$log" 2>&1 || die "packaging the extension failed"
step "ready: $(ls editors/vscode/dist/*.vsix 2>/dev/null | head -n1)"
