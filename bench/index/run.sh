#!/usr/bin/env bash
# Workspace index measurements (issue #25; bench/README.md "Workspace index"), on two trees:
#   self:  this repository's server/ sources (non-test .cc files of BUILD's compile database)
#   gtest: googletest (/usr/src/googletest copied to WORK, configured with its tests and samples)
# For each: index from cold vs bare libclang parse, the index's memory vs clangd's background
# index of the same database (clangd from Debian, same run), restart, an edit of a widely
# included header, edit → fresh diagnostics p50/p95 on the largest file vs bare reparse, and
# hover latency while indexing vs idle.
#
# Usage: bench/index/run.sh BUILD [WORK] [EDITS]   (BUILD: a build tree with index_bench and
#        perfhat-lsp; WORK: scratch directory, default /tmp/perfhat-index-bench; EDITS: 40)
set -euo pipefail
BUILD=$(cd "$1" && pwd)
WORK=${2:-/tmp/perfhat-index-bench}
EDITS=${3:-40}
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
GTEST_SRC=${GOOGLETEST_SOURCE_DIR:-/usr/src/googletest}
CLANGD=${CLANGD:-clangd}
mkdir -p "$WORK"

echo "== machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%FT%TZ)"
echo "== clangd: $($CLANGD --version | head -1)"

# self: the server's own sources.
mkdir -p "$WORK/self"
python3 - "$BUILD/compile_commands.json" "$WORK/self/compile_commands.json" <<'PY'
import json, sys
db = json.load(open(sys.argv[1]))
keep = [e for e in db if "/server/" in e["file"] and "/build" not in e["file"]
        and not e["file"].endswith("_test.cc") and "fuzz" not in e["file"]
        and "benchmark" not in e["file"]]
json.dump(keep, open(sys.argv[2], "w"))
PY
# gtest: a copy, so that the header edit and the index files stay out of /usr/src.
rm -rf "$WORK/gtest"
cp -r "$GTEST_SRC" "$WORK/gtest"
cmake -S "$WORK/gtest" -B "$WORK/gtest/build" -G Ninja -DCMAKE_EXPORT_COMPILE_COMMANDS=ON \
  -Dgtest_build_tests=ON -Dgtest_build_samples=ON >"$WORK/gtest-cmake.log" 2>&1

largest() {
  python3 -c '
import json, sys
files = {e["file"] for e in json.load(open(sys.argv[1]))}
print(max(files, key=lambda f: sum(1 for _ in open(f, errors="replace"))))' "$1"
}

run_tree() {
  local name=$1 db=$2 root=$3 header=$4 store=$2.index.sqlite
  local file
  file=$(largest "$db")
  echo "== $name: $(python3 -c 'import json,sys; print(len({e["file"] for e in json.load(open(sys.argv[1]))}))' "$db") files, largest $file"
  "$BUILD/server/index_bench" index "$db" "$root" "$store" "$header"
  rm -rf "$(dirname "$db")/.cache/clangd" "$root/.cache/clangd"
  # clangd indexes the whole database whichever file is open; a small one keeps its AST cheap.
  python3 "$HERE/clangd_memory.py" "$CLANGD" "$(dirname "$db")" "$(python3 -c 'import json,sys; print(min({e["file"] for e in json.load(open(sys.argv[1]))}, key=lambda f: sum(1 for _ in open(f, errors="replace"))))' "$db")"
  "$BUILD/server/index_bench" edit "$BUILD/server/perfhat-lsp" "$db" "$root" "$file" "$EDITS"
}

run_tree gtest "$WORK/gtest/build/compile_commands.json" "$WORK/gtest" \
  "$WORK/gtest/googletest/include/gtest/internal/gtest-port.h"
# No header edit here: it would touch the checkout (and every build of it).
run_tree self "$WORK/self/compile_commands.json" "$SRC" ""
