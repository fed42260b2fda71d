#!/usr/bin/env bash
# A probe outside this replica's variant (issue 23) must cost what an excluded probe costs.
# Instruction counts of monitored() under callgrind are deterministic, so this compares them
# exactly: masked (PERFHAT_VARIANT_MANIFEST) vs excluded by PERFHAT_SCOPE, and bounds the
# difference to a globally disabled probe (set_enabled(false)) and to an enabled one (phase 1).
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
  if (m != e) { print "FAIL: a masked probe costs " m " instructions, an excluded one " e; exit 1 }
  if (m - d > 8) { print "FAIL: masked costs " m - d " instructions more than disabled (> 8)"; exit 1 }
  if (m >= p) { print "FAIL: masked (" m ") is not cheaper than an enabled probe (" p ")"; exit 1 }
  print "ok"
}'
