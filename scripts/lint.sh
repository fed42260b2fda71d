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
  mapfile -t tus < <(printf '%s\n' "${files[@]}" | grep '\.cc$')
  clang-tidy -p "$build" --quiet "${tus[@]}"
else
  echo "lint: $build/compile_commands.json missing; configure first (cmake -S . -B $build)" >&2
  exit 2
fi
