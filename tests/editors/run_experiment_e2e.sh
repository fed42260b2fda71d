#!/usr/bin/env bash
# End-to-end test of the controlled experiment (issue #21): a study of six scripted participants,
# each timed by the real `perfhat-experiment run` (keys written to its stdin as a participant
# would press them). The treatment group solves T4 in a real headless Neovim with the perfhat
# plugin, whose perfhat-lsp runs through `perfhat-experiment lsp-proxy`: their first encounter
# and root cause come from the server's own regression warning and hover, not from keys. The
# control group presses f and r. Then `report` writes Markdown and HTML, and headless Chromium
# renders the HTML.
# Usage: run_experiment_e2e.sh PERFHAT_EXPERIMENT PERFHAT_LSP
# Exit 77 (CTest "skipped") only when PERFHAT_SKIP_EDITOR_TESTS=1, with the reason printed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
exp=$(realpath -m "${1:?usage: run_experiment_e2e.sh perfhat-experiment perfhat-lsp}")
server=$(realpath -m "${2:?usage: run_experiment_e2e.sh perfhat-experiment perfhat-lsp}")
chromium=${PERFHAT_CHROMIUM:-/usr/bin/chromium}

if [ "${PERFHAT_SKIP_EDITOR_TESTS:-0}" = 1 ]; then
  echo "SKIPPED: editor tests disabled by PERFHAT_SKIP_EDITOR_TESTS=1"
  exit 77
fi
command -v nvim >/dev/null || { echo "FAIL: nvim not installed (run scripts/install-deps.sh)"; exit 1; }
[ -x "$chromium" ] || { echo "FAIL: $chromium not installed (run scripts/install-deps.sh)"; exit 1; }
for bin in "$exp" "$server"; do
  [ -x "$bin" ] || { echo "FAIL: not built: $bin"; exit 1; }
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/perfhat-experiment-e2e.XXXXXX")
runner_pid=
cleanup() {
  [ -n "$runner_pid" ] && kill "$runner_pid" 2>/dev/null
  if [ "${PERFHAT_E2E_KEEP:-0}" = 1 ]; then echo "kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
mkdir -p "$tmp/home" "$tmp/xdg/config" "$tmp/xdg/data" "$tmp/xdg/state" "$tmp/xdg/cache"

# The study: the sample service, T1 (regular) and T4 (performance), six participants.
cat >"$tmp/study.json" <<JSON
{
  "name": "End-to-end test study",
  "sample": "$repo/samples/agile",
  "sample_path": "samples/agile",
  "compile_flags": "-std=c++20 -I{task_dir} -I$repo/instrumentation/include -I$repo",
  "tasks": [
    {"id": "T1", "type": "regular", "briefing": "$repo/samples/tasks/T1/BRIEF.md"},
    {"id": "T4", "type": "performance", "briefing": "$repo/samples/tasks/T4/BRIEF.md",
     "function": "agile::IterationService::iterationMetrics(int) const",
     "culprit": "agile::Task::effortSpent() const"}
  ],
  "participants": [
    {"id": "P1", "experience_years": 2, "performance_skill": 2},
    {"id": "P2", "experience_years": 3, "performance_skill": 2},
    {"id": "P3", "experience_years": 6, "performance_skill": 3},
    {"id": "P4", "experience_years": 7, "performance_skill": 3},
    {"id": "P5", "experience_years": 10, "performance_skill": 4},
    {"id": "P6", "experience_years": 12, "performance_skill": 4}
  ]
}
JSON
seed=5
"$exp" design --study "$tmp/study.json" --seed $seed >"$tmp/design.json"
group_of() {
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))
print(next(a["group"] for a in d["assignments"] if a["participant"] == sys.argv[2]))' \
    "$tmp/design.json" "$1"
}

wait_log() {  # wait_log FILE PATTERN WHAT: bounded wait for a line in a file
  for _ in $(seq 1200); do
    grep -q -- "$2" "$1" 2>/dev/null && return 0
    kill -0 "$runner_pid" 2>/dev/null || fail "the runner ended while waiting for $3"
    sleep 0.1
  done
  fail "timed out waiting for $3"
}

n=0
for p in P1 P2 P3 P4 P5 P6; do
  n=$((n + 1))
  group=$(group_of $p)
  session=$tmp/sessions/$p
  mkdir -p "$session"
  mkfifo "$tmp/keys.$p"
  "$exp" run --study "$tmp/study.json" --seed $seed --participant $p --session "$session" \
    <"$tmp/keys.$p" >"$tmp/run.$p.out" 2>&1 &
  runner_pid=$!
  exec 3>"$tmp/keys.$p"
  key() { printf '%s\n' "$1" >&3; }
  pause=$(awk -v n=$n 'BEGIN { printf "%.2f", 0.2 + 0.07 * n }')  # participants differ a little
  echo "== $p ($group)"
  # T1: understood and reached the code, then done.
  wait_log "$tmp/run.$p.out" "reached the code" "T1's briefing"
  key ""
  sleep "$pause"
  key d
  wait_log "$tmp/run.$p.out" "======== T4" "T4's briefing"
  key ""
  wait_log "$session/events.jsonl" '"task_started","task":"T4"\|"task":"T4".*"task_started"' "T4's start"
  if [ "$group" = treatment ]; then
    # The participant's edits outside the function (the new field and the API line), then the
    # change itself in Neovim.
    (cd "$session/T4" && patch -s -p1 <"$repo/samples/tasks/T4/reference.patch")
    sed -i '/effortSpent();  \/\/ T4/d' "$session/T4/samples/agile/iteration_service.cc"
    HOME=$tmp/home XDG_CONFIG_HOME=$tmp/xdg/config XDG_DATA_HOME=$tmp/xdg/data \
      XDG_STATE_HOME=$tmp/xdg/state XDG_CACHE_HOME=$tmp/xdg/cache \
      PERFHAT_TEST_EXPERIMENT=$exp PERFHAT_TEST_SERVER=$server PERFHAT_TEST_SESSION=$session \
      PERFHAT_TEST_TASK_DIR=$session/T4 \
      PERFHAT_TEST_FEEDBACK=$repo/samples/datasets/agile.feedback.json \
      timeout -k 5 240 nvim --headless --clean --cmd "set rtp^=$repo/editors/neovim" \
      -c "luafile $here/nvim_experiment_participant.lua" </dev/null ||
      { cat "$tmp/run.$p.out"; fail "$p's Neovim session failed"; }
    wait_log "$tmp/run.$p.out" "root cause recorded (lsp)" "the runner to take RCA from the server"
    grep -q "first encounter recorded (lsp)" "$tmp/run.$p.out" ||
      fail "$p: the first encounter did not come from the server"
  else
    sleep "$pause"
    key f
    sleep "$pause"
    key r
    sleep "$pause"
  fi
  key d
  exec 3>&-
  wait "$runner_pid" || fail "$p's runner failed: $(cat "$tmp/run.$p.out")"
  runner_pid=
  grep -q "session finished" "$tmp/run.$p.out" || fail "$p's session did not finish"
done

# Every participant's measurements under one header, then the report.
{
  head -n1 "$tmp/sessions/P1/measurements.csv"
  for p in P1 P2 P3 P4 P5 P6; do tail -n +2 "$tmp/sessions/$p/measurements.csv"; done
} >"$tmp/measurements.csv"
echo "-- measurements"
cat "$tmp/measurements.csv"
rows=$(($(wc -l <"$tmp/measurements.csv") - 1))
[ "$rows" = 24 ] || fail "expected 24 measurement rows (6 participants × T1 total + T4 total/fe/rca), got $rows"
for m in fe rca; do
  n_t=$(grep -c ",treatment,T4,$m," "$tmp/measurements.csv" || true)
  [ "$n_t" = 3 ] || fail "treatment T4 $m: $n_t rows, expected 3"
done
# The treatment group's FE and RCA are the server's: the log says where each came from.
for p in P1 P2 P3 P4 P5 P6; do
  if [ "$(group_of $p)" = treatment ]; then
    grep -q '"lsp_diagnostic"' "$tmp/sessions/$p/events.jsonl" || fail "$p: no lsp_diagnostic event"
    grep -q '"lsp_hover"' "$tmp/sessions/$p/events.jsonl" || fail "$p: no lsp_hover event"
  fi
done

"$exp" report --study "$tmp/study.json" --seed $seed --csv "$tmp/measurements.csv" \
  --out "$tmp/report" >"$tmp/report.out"
for f in report.md report.html measurements.csv design.json stats.json; do
  [ -s "$tmp/report/$f" ] || fail "report did not write $f"
done
grep -q "Table II" "$tmp/report/report.md" || fail "report.md lacks Table II"
grep -q "| T4 | rca |\|T4.*rca" "$tmp/report/report.md" || fail "report.md lacks T4 rca"
echo "PASS: report written ($(wc -c <"$tmp/report/report.html") bytes of HTML)"

# The HTML in a real browser: the DOM Chromium built, and a screenshot it painted.
"$chromium" --headless --no-sandbox --disable-gpu --user-data-dir="$tmp/chrome" \
  --dump-dom "file://$tmp/report/report.html" >"$tmp/dom.html" 2>/dev/null
grep -q "Table II" "$tmp/dom.html" || fail "Chromium's DOM lacks Table II"
[ "$(grep -o '<svg' "$tmp/dom.html" | wc -l)" -ge 2 ] || fail "Chromium's DOM lacks the box plots"
"$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$tmp/chrome" \
  --window-size=1200,1600 --screenshot="$tmp/report.png" "file://$tmp/report/report.html" \
  >/dev/null 2>&1
[ -s "$tmp/report.png" ] || fail "Chromium did not render a screenshot of the report"
echo "PASS: the report renders in headless Chromium (DOM with Table II and box plots, screenshot)"
