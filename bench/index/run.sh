#!/usr/bin/env bash
# Workspace index measurements (issue #25; bench/README.md "Workspace index"), on two trees:
#   self:  this repository's server/ sources (non-test .cc files of BUILD's compile database),
#          copied to WORK/self
#   gtest: googletest (/usr/src/googletest copied to WORK, configured with its tests and samples)
# For each: index from cold vs bare libclang parse (interleaved file by file, CPU time), the
# index's memory vs clangd's background index of the same database (clangd from Debian, same
# run: its $/memoryUsage "background_index" subtree, its RSS, CPU and index on disk), restart,
# the update after an edit of a widely included header, hover and inlay-hint latency while
# indexing vs a server with the index off (alternating), and edit → fresh inlay hints p50/p95 on
# the largest file vs libclang's bare reparse (interleaved). Long: about an hour on 2 loaded
# cores; not run in CI. bench/README.md "Workspace index" has the figures.
#
# Usage: bench/index/run.sh BUILD [WORK] [EDITS]   (BUILD: a build tree with index_bench and
#        perfhat-lsp; WORK: scratch directory, default /tmp/perfhat-index-bench; EDITS: 40)
# TREES="gtest self" (the default) chooses the trees, in that order.
# The two binaries are copied to WORK first, so that rebuilding BUILD during the run does not
# change what the later steps run.
set -euo pipefail
BUILD=$(cd "$1" && pwd)
WORK=${2:-/tmp/perfhat-index-bench}
EDITS=${3:-40}
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
GTEST_SRC=${GOOGLETEST_SOURCE_DIR:-/usr/src/googletest}
CLANGD=${CLANGD:-clangd}
TREES=${TREES:-gtest self}
mkdir -p "$WORK/bin"
cp "$BUILD/server/index_bench" "$BUILD/server/perfhat-lsp" "$WORK/bin/"
BIN=$WORK/bin

echo "== machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%FT%TZ)"
echo "== clangd: $($CLANGD --version | head -1)"

# self: the server's own sources, from a copy of the checkout (so that the header edit below
# touches neither the checkout nor its builds); the copy's database is BUILD's with the source
# paths moved (generated headers stay in BUILD).
prepare_self() {
rm -rf "$WORK/self"
mkdir -p "$WORK/self"
tar -C "$SRC" --exclude=./build --exclude=./.git --exclude='./build-*' -cf - . | tar -C "$WORK/self" -xf -
python3 - "$BUILD/compile_commands.json" "$WORK/self/compile_commands.json" "$SRC" "$WORK/self" "$BUILD" <<'PY'
import json, sys
db_in, db_out, src, copy, build = sys.argv[1:6]
import re
def move(s):
    s = s.replace(build, "\0BUILD\0")
    s = re.sub(re.escape(src) + r"(?=/|\s|$)", copy, s)
    return s.replace("\0BUILD\0", build)
db = json.load(open(db_in))
keep = [e for e in db if "/server/" in e["file"] and "/build" not in e["file"]
        and not e["file"].endswith("_test.cc") and "fuzz" not in e["file"]
        and "benchmark" not in e["file"]]
for e in keep:
    for k in ("file", "command", "directory"):
        if k in e: e[k] = move(e[k])
    if "arguments" in e: e["arguments"] = [move(a) for a in e["arguments"]]
json.dump(keep, open(db_out, "w"))
PY
}
# gtest: a copy, so that the header edit and the index files stay out of /usr/src.
prepare_gtest() {
rm -rf "$WORK/gtest"
cp -r "$GTEST_SRC" "$WORK/gtest"
cmake -S "$WORK/gtest" -B "$WORK/gtest/build" -G Ninja -DCMAKE_EXPORT_COMPILE_COMMANDS=ON \
  -Dgtest_build_tests=ON -Dgtest_build_samples=ON >"$WORK/gtest-cmake.log" 2>&1
}

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
  "$BIN/index_bench" index "$db" "$root" "$store" "$header"
  rm -rf "$(dirname "$db")/.cache/clangd" "$root/.cache/clangd"
  # clangd indexes the whole database whichever file is open; a small one keeps its AST cheap.
  python3 "$HERE/clangd_memory.py" "$CLANGD" "$(dirname "$db")" "$(python3 -c 'import json,sys; print(min({e["file"] for e in json.load(open(sys.argv[1]))}, key=lambda f: sum(1 for _ in open(f, errors="replace"))))' "$db")"
  echo "clangd index on disk: $(du -sk "$(dirname "$db")/.cache/clangd" "$root/.cache/clangd" 2>/dev/null | sort -u | awk '{s+=$1} END {printf "%.2f MB", s/1000}')"
  "$BIN/index_bench" edit "$BIN/perfhat-lsp" "$db" "$root" "$file" "$EDITS"
}

for tree in $TREES; do
  case $tree in
    gtest)
      prepare_gtest
      run_tree gtest "$WORK/gtest/build/compile_commands.json" "$WORK/gtest" \
        "$WORK/gtest/googletest/include/gtest/internal/gtest-port.h" ;;
    self)
      prepare_self
      # The most widely included header of the analysis: every server/ file reaches it.
      run_tree self "$WORK/self/compile_commands.json" "$WORK/self" \
        "$WORK/self/server/analysis/snapshot.h" ;;
    *) echo "unknown tree $tree" >&2; exit 2 ;;
  esac
done
