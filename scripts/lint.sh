#!/usr/bin/env bash
# clang-format check and clang-tidy over the project's own sources, using build/compile_commands.json.
#   scripts/lint.sh [--fix | --format-check]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${PERFHAT_BUILD_DIR:-build}
mapfile -t files < <(git ls-files '*.cc' '*.h' '*.hpp' | grep -vE '^(tests/fuzz/corpus|editors/)')
if [ "${1:-}" = --format-check ]; then  # formatting only (the CTest test source_format)
  exec clang-format --dry-run --Werror "${files[@]}"
fi
if [ "${1:-}" = --fix ]; then
  clang-format -i "${files[@]}"
else
  clang-format --dry-run --Werror "${files[@]}"
fi
if [ -f "$build/compile_commands.json" ]; then
  # Not in this build's compile database: the find_package(perfhat) consumer, built in its own
  # tree by the instr_install_consumer test, and fuzz seed inputs that happen to be C++.
  mapfile -t tus < <(printf '%s\n' "${files[@]}" | grep '\.cc$' |
    grep -vE '^instrumentation/tests/consumer/|/fuzz_corpus/')
  # The database is GCC's; clang-tidy stops at flags clang does not know (the autoinstrument
  # test's -finstrument-functions-exclude-file-list), so it reads a copy without them.
  db=$(mktemp -d)
  trap 'rm -rf "$db"' EXIT
  python3 - "$build/compile_commands.json" "$db/compile_commands.json" <<'PY'
import json, shlex, sys
gcc_only = ("-finstrument-functions-exclude-file-list=",)
entries = json.load(open(sys.argv[1]))
for e in entries:
    args = e["arguments"] if "arguments" in e else shlex.split(e.pop("command"))
    e["arguments"] = [a for a in args if not a.startswith(gcc_only)]
json.dump(entries, open(sys.argv[2], "w"))
PY
  clang-tidy -p "$db" --quiet "${tus[@]}"
else
  echo "lint: $build/compile_commands.json missing; configure first (cmake -S . -B $build)" >&2
  exit 2
fi
