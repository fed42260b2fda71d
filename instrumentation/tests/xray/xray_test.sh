#!/usr/bin/env bash
# XRay mode end to end: a program built with clang++ -fxray-instrument and perfhat::xray records
# the functions in scope (nesting kept), unpatches the others, and patches nothing when probes
# are off. Skipped (77) without a clang++ that has the XRay runtime.
#   xray_test.sh <source-dir> <libperfhat.a> <libperfhat_xray.a> <work-dir>
set -euo pipefail
SRC=$1 CORE=$2 XRAY=$3 WORK=$4
CLANG=$(command -v clang++-14 || command -v clang++ || true)
[[ -n $CLANG ]] || { echo "no clang++: skipped"; exit 77; }
mkdir -p "$WORK"
if ! "$CLANG" -std=c++17 -O2 -fxray-instrument -fxray-instruction-threshold=1 \
    -I"$SRC/instrumentation/include" "$SRC/instrumentation/tests/xray/xray_app.cc" \
    -o "$WORK/xray_app" -Wl,--undefined=perfhat_xray_anchor "$XRAY" "$CORE" -lpthread -ldl \
    2>"$WORK/build.log"; then
  if grep -q "xray" "$WORK/build.log" && grep -qi "cannot find\|No such file" "$WORK/build.log"; then
    echo "clang's XRay runtime is not installed (libclang-rt-dev): skipped"; exit 77
  fi
  cat "$WORK/build.log"; exit 1
fi
fail() { echo "FAIL: $*"; exit 1; }

on=$(PERFHAT_SAMPLER=full PERFHAT_SCOPE='xapp::*,-xapp::skipped*' PERFHAT_ENDPOINT= "$WORK/xray_app")
echo "on:  $on"
[[ $on == *"leaf=200 middle=100 skipped=0 nested=1"* ]] || fail "scope or nesting: $on"
unpatched=$(sed -E 's/.*unpatched=([0-9]+).*/\1/' <<<"$on")
((unpatched >= 2)) || fail "skipped() and main() should be unpatched: $on"

off=$(PERFHAT_ENABLED=0 PERFHAT_SAMPLER=full PERFHAT_ENDPOINT= "$WORK/xray_app")
echo "off: $off"
[[ $off == *"leaf=0 middle=0 skipped=0 nested=0 functions=0 unpatched=0"* ]] || fail "off: $off"
echo PASS
