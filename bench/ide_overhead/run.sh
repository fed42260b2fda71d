#!/usr/bin/env bash
# The IDE-overhead study (perfhat-experiment overhead, paper §VI) on the two code bases, as
# bench/README.md "IDE overhead" reports it.
#   bench/ide_overhead/run.sh BUILD_DIR agile [REPEAT]        the sample service (16 files)
#   bench/ide_overhead/run.sh BUILD_DIR own [REPEAT [FULL]]   this repository's whole database
# REPEAT (default 10) single-file repetitions; FULL (default REPEAT) full-project repetitions.
# Results go to $OVERHEAD_OUT (default bench/ide_overhead/<name>-new); what is measured so far is
# written after every repetition, so an interrupted run keeps its numbers. The full project of
# this repository is about 12 CPU-minutes a run per cache mode: run it niced or on an idle machine
# (OVERHEAD_PREFIX="chrt --idle 0" runs the whole study at SCHED_IDLE; the server's CPU time,
# the figure to read, is measured from /proc and does not include time spent waiting for a CPU).
set -euo pipefail
build=$(cd "${1:?BUILD_DIR}" && pwd)
what=${2:?agile|own}
repeat=${3:-10}
full=${4:-$repeat}
root=$(cd "$(dirname "$0")/../.." && pwd)
lsp=("$build/server/perfhat-lsp" --feedback-file "$root/samples/datasets/agile.feedback.json")
read -r -a prefix <<< "${OVERHEAD_PREFIX:-nice -n 10}"
case "$what" in
  agile)
    db=$(mktemp -d)
    trap 'rm -rf "$db"' EXIT
    # The sample's own translation units: no tests, fuzzers or the workload driver.
    python3 - "$build/compile_commands.json" "$db/compile_commands.json" <<'PY'
import json, os, sys
entries, seen, out = json.load(open(sys.argv[1])), set(), []
for e in entries:
    f = os.path.normpath(os.path.join(e.get("directory", ""), e["file"]))
    if "/samples/agile/" in f and not f.endswith(("_test.cc", "_fuzz.cc")) and f not in seen:
        seen.add(f)
        out.append(e)
json.dump(out, open(sys.argv[2], "w"), indent=1)
print(f"{len(out)} translation units of the sample", file=sys.stderr)
PY
    out=${OVERHEAD_OUT:-$root/bench/ide_overhead/agile-sample-new}
    "${prefix[@]}" "$build/experiment/perfhat-experiment" overhead --name "agile sample" \
      --compile-commands "$db" --file "$root/samples/agile/iteration_service.cc" \
      --repeat "$repeat" --full-repeat "$full" --out "$out" -- "${lsp[@]}"
    ;;
  own)
    out=${OVERHEAD_OUT:-$root/bench/ide_overhead/own-tree-new}
    "${prefix[@]}" "$build/experiment/perfhat-experiment" overhead --name "perfhat (own tree)" \
      --compile-commands "$build" --file "$root/server/server/server.cc" \
      --repeat "$repeat" --full-repeat "$full" --out "$out" -- "${lsp[@]}"
    ;;
  *) echo "usage: $0 BUILD_DIR agile|own [REPEAT [FULL]]" >&2; exit 2 ;;
esac
