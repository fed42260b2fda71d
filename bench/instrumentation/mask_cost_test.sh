#!/usr/bin/env bash
# A probe outside this replica's variant (issue 23) must cost what a disabled probe costs: both
# stop at the probe's one entry test, the site's `armed` byte (perfhat.hpp, site_arming.cc).
# Instruction counts of monitored() under callgrind are deterministic, so this compares them per
# call: masked (PERFHAT_VARIANT_MANIFEST) vs globally disabled (set_enabled(false)) vs excluded by
# PERFHAT_SCOPE, all within 0.05 instruction per call (the only difference allowed is the first
# call's registration, spread over the chains × depth calls), and cheaper than an enabled probe.
# Usage: mask_cost_test.sh INSTR_MOOBENCH [chains=20000]. Exit 77 (skipped) without valgrind.
set -euo pipefail
bin=$1
chains=${2:-20000}
depth=10
command -v valgrind >/dev/null || { echo "valgrind not installed: skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ir_per_call() {  # row name -> Ir of monitored() per call (three decimals)
  valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" --toggle-collect='*monitored*' \
    "$bin" "$chains" "$depth" "$1" >"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err"; exit 1; }
  if grep -q CHECK "$tmp/out"; then cat "$tmp/out"; exit 1; fi
  awk -v n=$((chains * depth)) '/^(summary|totals):/ { printf "%.3f\n", $2 / n; exit }' "$tmp/cg"
}

disabled=$(ir_per_call disabled)
masked=$(ir_per_call masked)
excluded=$(ir_per_call "scope excluded")
phase1=$(ir_per_call "phase 1 only")
echo "instructions per call of monitored(): disabled $disabled, masked $masked," \
  "scope excluded $excluded, phase 1 $phase1"
awk -v d="$disabled" -v m="$masked" -v e="$excluded" -v p="$phase1" 'BEGIN {
  tol = 0.05
  if (m - d > tol || d - m > tol) {
    print "FAIL: a masked probe costs " m " instructions per call, a disabled one " d; exit 1
  }
  if (m - e > tol || e - m > tol) {
    print "FAIL: a masked probe costs " m " instructions per call, an excluded one " e; exit 1
  }
  if (m >= p) { print "FAIL: masked (" m ") is not cheaper than an enabled probe (" p ")"; exit 1 }
  print "ok"
}'
