#!/usr/bin/env bash
# A probed call's instructions on the collection budget's paths (issue #22), from callgrind's
# deterministic counts of monitored() (bench/budget/skip_cost.cc): a call inside a budget skip run
# must cost fewer instructions than a counted call without a budget, and more than a disabled
# probe (which is what a site the budget disarms costs). Prints the three per-call figures.
# Usage: skip_cost_test.sh BUDGET_SKIP_COST [calls=200000]. Exit 77 (skipped) without valgrind.
set -euo pipefail
bin=$1
calls=${2:-200000}
command -v valgrind >/dev/null || { echo "valgrind not installed: skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ir_per_call() {  # row -> Ir of monitored() per call (three decimals); 5 rounds of $calls
  valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" --toggle-collect='*monitored*' \
    "$bin" "$1" "$calls" >"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err"; exit 1; }
  awk -v n=$((calls * 5 + 3)) '/^(summary|totals):/ { printf "%.3f\n", $2 / n; exit }' "$tmp/cg"
}

disabled=$(ir_per_call disabled)
counted=$(ir_per_call counted)
skipped=$(ir_per_call skipped)
echo "instructions per call of monitored(): disabled $disabled, counted (no budget) $counted," \
  "skipped (inside a budget skip run) $skipped"
awk -v d="$disabled" -v c="$counted" -v s="$skipped" 'BEGIN {
  if (!(s < c)) { print "FAIL: a skipped call (" s ") is not cheaper than a counted one (" c ")"; exit 1 }
  if (!(d < s)) { print "FAIL: a disabled probe (" d ") is not cheaper than a skipped call (" s ")"; exit 1 }
  print "ok"
}'
