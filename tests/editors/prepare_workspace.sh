#!/usr/bin/env bash
# Copies the sample workspace to DEST and writes its compile_commands.json with DEST's absolute
# paths (absolute paths are never committed). Usage: prepare_workspace.sh DEST
set -euo pipefail
src=$(cd "$(dirname "$0")/workspace" && pwd)
dest=$1
mkdir -p "$dest"
cp -R "$src/." "$dest/"
dest=$(cd "$dest" && pwd)
cat >"$dest/compile_commands.json" <<JSON
[
  {
    "directory": "$dest",
    "file": "$dest/src/catalog.cc",
    "arguments": ["c++", "-std=c++20", "-Wall", "-c", "src/catalog.cc", "-o", "catalog.o"]
  }
]
JSON
