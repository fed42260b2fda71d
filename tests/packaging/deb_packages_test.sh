#!/usr/bin/env bash
# Builds the Debian packages with `cpack -G DEB` from the built tree and checks them without
# installing anything on this machine: names, declared dependencies (dpkg-shlibdeps for the
# tools, the CMake package's for libperfhat-dev), contents; then unpacks both into a scratch
# root and runs the tools and builds the C++17 consumer from there (the packaged static
# libraries must still link).
# Usage: deb_packages_test.sh CMAKE CPACK SOURCE_DIR BUILD_DIR WORK_DIR
set -euo pipefail
CMAKE=$1 CPACK=$2 SRC=$3 BUILD=$4 WORK=$5
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$WORK"
mkdir -p "$WORK"

"$CPACK" -G DEB --config "$BUILD/CPackConfig.cmake" -B "$WORK" >"$WORK/cpack.log" ||
  { cat "$WORK/cpack.log"; fail "cpack -G DEB"; }
tools=$(ls "$WORK"/perfhat_*.deb) || fail "no perfhat_*.deb"
dev=$(ls "$WORK"/libperfhat-dev_*.deb) || fail "no libperfhat-dev_*.deb"

has_dep() {  # has_dep DEB NAME: NAME is among DEB's Depends
  dpkg-deb -f "$1" Depends | tr ',' '\n' | sed 's/^ *//' | grep -q "^$2\( \|$\)" ||
    fail "$(basename "$1") does not depend on $2: $(dpkg-deb -f "$1" Depends)"
}
has_file() {  # has_file DEB PATH
  dpkg-deb -c "$1" | awk '{print $6}' | grep -qx "./$2" || fail "$(basename "$1") lacks /$2"
}
echo "== perfhat: $(dpkg-deb -f "$tools" Depends)"
for d in libclang1-14 libclang-common-14-dev libcpp-httplib0.11 libpq5 libsqlite3-0 zlib1g; do
  has_dep "$tools" "$d"
done
for f in usr/bin/perfhat-lsp usr/bin/perfhat-handler usr/bin/perfhat-fetch usr/bin/perfhat-plan \
  usr/share/nvim/site/pack/perfhat/start/perfhat/lua/perfhat/init.lua; do
  has_file "$tools" "$f"
done
echo "== libperfhat-dev: $(dpkg-deb -f "$dev" Depends)"
# The OTLP transport module's runtime libraries (dpkg-shlibdeps); nothing to link against.
for d in libcpp-httplib0.11 zlib1g; do has_dep "$dev" "$d"; done
for f in usr/include/perfhat/perfhat.hpp usr/lib/cmake/perfhat/perfhatConfig.cmake \
  usr/lib/perfhat/libperfhat_otlp_http.so usr/lib/libperfhat.a usr/lib/libperfhat_otlp.a \
  usr/lib/libperfhat_autoinstrument.a usr/lib/libperfhat_xray.a usr/share/doc/libperfhat-dev/auto-instrumentation.md; do
  has_file "$dev" "$f"
done
# The split: nothing in both packages.
dups=$(cat <(dpkg-deb -c "$tools") <(dpkg-deb -c "$dev") | awk '$6 !~ /\/$/ {print $6}' | sort | uniq -d)
[ -z "$dups" ] || fail "files in both packages: $dups"

echo "== unpacked into $WORK/pkgroot"
dpkg-deb -x "$tools" "$WORK/pkgroot"
dpkg-deb -x "$dev" "$WORK/pkgroot"
for tool in perfhat-lsp perfhat-handler perfhat-fetch perfhat-plan; do
  "$WORK/pkgroot/usr/bin/$tool" --version | grep -q "^$tool " || fail "$tool --version"
done
"$CMAKE" -S "$SRC/instrumentation/tests/consumer" -B "$WORK/consumer" -G Ninja \
  -DCMAKE_PREFIX_PATH="$WORK/pkgroot/usr" >"$WORK/consumer.log" || { cat "$WORK/consumer.log"; fail "consumer configure"; }
grep -rq "$WORK/pkgroot/usr/lib/cmake/perfhat" "$WORK/consumer/CMakeCache.txt" ||
  fail "consumer did not use the packaged CMake package"
"$CMAKE" --build "$WORK/consumer" || fail "consumer build"
out=$("$WORK/consumer/consumer")
echo "consumer: $out"
[ "$out" = "spans=6 twice=3 evens=1 evens_size=3 requests=1 scopes=1 sum=6" ] || fail "consumer output"
echo PASS
