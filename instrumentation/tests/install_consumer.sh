#!/usr/bin/env bash
# Installs the built tree (tools + libperfhat) into a temporary prefix, moves that prefix
# elsewhere (the installation must be relocatable) and, from the moved copy only:
#   1. the CMake package names no path of this build: the source and build folders, the staging
#      prefix, or the build machine's cpp-httplib and zlib files;
#   2. perfhat-lsp, perfhat-handler, perfhat-fetch and perfhat-plan run (--version),
#      perfhat-lsp --check shows the recorded dataset's numbers on a sample file, the Neovim
#      plugin is there;
#   3. a C++17 consumer (tests/consumer: every probe macro, perfhat::init, perfhat::shutdown),
#      compiled with -Wall -Wextra -Wpedantic -Werror, records exactly the spans it should;
#   4. docs/auto-instrumentation.md's example, its CMakeLists.txt and main.cc cut out of the doc
#      as written, builds (GCC, and Clang if installed) with no RUNPATH, runs with the doc's
#      environment against the installed perfhat-handler (its transport module found in the moved
#      prefix), and the handler counts every call of orders::handle(int).
# Usage: install_consumer.sh CMAKE SOURCE_DIR BUILD_DIR WORK_DIR
set -euo pipefail
CMAKE=$1 SRC=$2 BUILD=$3 WORK=$4
CONSUMER=$SRC/instrumentation/tests/consumer
DOC=$SRC/docs/auto-instrumentation.md

fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$WORK"
mkdir -p "$WORK"
handler_pid=
cleanup() { if [ -n "$handler_pid" ]; then kill "$handler_pid" 2>/dev/null || true; fi; }
trap cleanup EXIT

echo "== install into $WORK/stage, then move it to a directory with a space and a quote"
"$CMAKE" --install "$BUILD" --prefix "$WORK/stage" >"$WORK/install.log"
# The moved prefix holds a space and a quote: the module directory compiled into consumers
# (perfhat_otlp_module_dir.cc.in) must survive them. (Not a backslash: CMake's package search
# turns it into a slash.)
moved="$WORK/moved \"q"
mv "$WORK/stage" "$moved"
PREFIX=$moved

echo "== 1. no build-machine path in the CMake package"
pkgdir=$(dirname "$(find "$PREFIX" -name perfhatConfig.cmake -print -quit)")
[ -d "$pkgdir" ] || fail "perfhatConfig.cmake not installed"
for forbidden in "$SRC" "$BUILD" "$WORK/stage" libcpp-httplib.so libz.so; do
  if grep -rnF -- "$forbidden" "$pkgdir"; then fail "installed CMake package names $forbidden"; fi
done
# Any other absolute path (outside CMake's own generated boilerplate) would be one too.
if grep -rnE '"/[a-z]' "$pkgdir"/perfhat*.cmake; then fail "absolute path in $pkgdir"; fi

echo "== 2. the tools run from the moved prefix"
for tool in perfhat-lsp perfhat-handler perfhat-fetch perfhat-plan; do
  [ -x "$PREFIX/bin/$tool" ] || fail "$tool not installed"
  "$PREFIX/bin/$tool" --version | grep -q "^$tool " || fail "$tool --version"
done
# The installed language server parses with libclang and matches the recorded dataset.
"$PREFIX/bin/perfhat-lsp" --check "$SRC/samples/agile/iteration_service.cc" \
  --feedback-file "$SRC/samples/datasets/agile.feedback.json" >"$WORK/check.out" ||
  fail "perfhat-lsp --check"
grep -q "prod p50" "$WORK/check.out" || fail "perfhat-lsp --check shows no production data"
[ -f "$(find "$PREFIX/share/nvim/site/pack/perfhat/start/perfhat/lua/perfhat" -name init.lua)" ] ||
  fail "Neovim plugin not installed"

echo "== 3. C++17 consumer of the probe API"
"$CMAKE" -S "$CONSUMER" -B "$WORK/consumer" -G Ninja -DCMAKE_PREFIX_PATH="$PREFIX" \
  >"$WORK/consumer-configure.log" || { cat "$WORK/consumer-configure.log"; fail "consumer configure"; }
"$CMAKE" --build "$WORK/consumer" || fail "consumer build"
out=$("$WORK/consumer/consumer")
echo "consumer: $out"
# serve(3): the request, its scope, evens() and three twice() calls, all recorded (sampler full).
[ "$out" = "spans=6 twice=3 evens=1 evens_size=3 requests=1 scopes=1 sum=6" ] ||
  fail "consumer recorded the wrong spans"

echo "== 4. docs/auto-instrumentation.md's example against the installed handler"
# The first ```cmake and the first ```cpp block of the doc, verbatim.
block() { awk -v lang="$1" '$0 == "```" lang { on = 1; n++; next } on && $0 == "```" { on = 0; if (n == 1) exit; next } on && n == 1' "$DOC"; }
mkdir -p "$WORK/orders"
block cmake >"$WORK/orders/CMakeLists.txt"
block cpp >"$WORK/orders/main.cc"
grep -q perfhat_autoinstrument "$WORK/orders/CMakeLists.txt" || fail "no CMake example in $DOC"
grep -q "long handle(int n)" "$WORK/orders/main.cc" || fail "main.cc example not cut out of $DOC"

"$PREFIX/bin/perfhat-handler" --mode deployed --listen 127.0.0.1:0 --store "$WORK/orders.sqlite" \
  --token s3cret 2>"$WORK/handler.log" &
handler_pid=$!
for _ in $(seq 300); do
  grep -q "^listening on " "$WORK/handler.log" && break
  kill -0 "$handler_pid" 2>/dev/null || { cat "$WORK/handler.log"; fail "handler exited"; }
  sleep 0.1
done
addr=$(sed -n 's/^listening on //p' "$WORK/handler.log")
[ -n "$addr" ] || fail "handler did not start"

# Calls of orders::handle(int) the handler has stored (0 before the first: 404 "no data").
handle_count() {
  curl -sG -H 'Authorization: Bearer s3cret' "http://$addr/v1/feedback" \
    --data-urlencode "key=orders::handle(int)" | python3 -c '
import json, sys
d = json.load(sys.stdin)
if "error" in d:
    print(0)
else:
    item = d["items"][0] if "items" in d else d
    print(item["stats"]["count"])'
}

compilers=(c++)
command -v clang++ >/dev/null && compilers+=(clang++)
for cxx in "${compilers[@]}"; do
  dir=$WORK/orders-build-$cxx
  "$CMAKE" -S "$WORK/orders" -B "$dir" -G Ninja -DCMAKE_CXX_COMPILER="$cxx" \
    -DCMAKE_PREFIX_PATH="$PREFIX" >"$dir.log" || { cat "$dir.log"; fail "orders configure ($cxx)"; }
  "$CMAKE" --build "$dir" || fail "orders build ($cxx)"
  # The module is found through the package's compiled-in directory (the moved prefix is neither
  # the install path nor on any search path); a RUNPATH would cost every start failed lookups.
  if readelf -d "$dir/orders" | grep -E 'R(UN)?PATH'; then fail "orders has a RUNPATH ($cxx)"; fi
  before=$(handle_count)
  PERFHAT_ENDPOINT=http://$addr PERFHAT_TOKEN=s3cret PERFHAT_SCOPE='orders::*' PERFHAT_SAMPLER=full "$dir/orders" ||
    fail "orders run ($cxx)"
  after=$(handle_count)
  echo "orders ($cxx): handler counted $((after - before)) calls of orders::handle(int)"
  [ $((after - before)) -eq 200 ] || fail "expected 200 calls of orders::handle(int) ($cxx)"
done
echo "PASS"
