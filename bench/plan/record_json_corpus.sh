#!/usr/bin/env bash
# Full-trace corpus of a call-heavy real program built with -finstrument-functions:
# nlohmann::json parsing and printing (json_corpus_app.cc), 36 sites (repetitions with different
# documents). Writes OUT (SITE<TAB>FUNCTION). Needs g++, nlohmann-json3-dev, nm.
#   bench/plan/record_json_corpus.sh OUT [items=20]   (OUT.legend: the functions' names)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=$1
TMP=$(mktemp -d "${TMPDIR:-/tmp}/perfhat-jsoncorpus.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
g++ -std=c++17 -O2 -finstrument-functions -finstrument-functions-exclude-file-list=/c++/,/bits/ \
  "$HERE/json_corpus_app.cc" -o "$TMP/app"
"$TMP/app" "$TMP/trace.bin" 36 "${2:-20}" >/dev/null
rm -f "$OUT.legend"
python3 "$HERE/json_corpus_to_tsv.py" "$TMP/app" "$TMP/trace.bin" "$OUT" "$OUT.legend"
