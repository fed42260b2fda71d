#!/usr/bin/env bash
# Interleaved per-process cost of prebuilt program sets (issue #18; bench/README.md): each
# configuration is a directory of binaries and an environment; every repetition runs every
# configuration once over all programs, in turn, so the machine's load falls on all of them alike.
# Per configuration, the medians over repetitions of: CPU time of all programs with the shell's
# `time` (user + system of the children: exec and exit included, tests/realcode/throughput.sh's
# measure), and separately under perf stat, each program's task-clock (from exec, every thread)
# and page faults, summed; each against the first configuration.
# Nothing exports (PERFHAT_ENDPOINT unset).
# Usage: interleaved.sh --programs "a b" [--args "--gtest_repeat=200"] [--reps 9] \
#          "name|dir|VAR=value;VAR2=value" ...
set -euo pipefail
PROGRAMS= ARGS= REPS=9
while [ $# -gt 0 ]; do
  case $1 in
    --programs) PROGRAMS=$2; shift 2 ;;
    --args) ARGS=$2; shift 2 ;;
    --reps) REPS=$2; shift 2 ;;
    *) break ;;
  esac
done
[ -n "$PROGRAMS" ] && [ $# -gt 0 ] || { sed -n '2,9p' "$0"; exit 2; }
command -v perf >/dev/null || { echo "SKIP: no perf"; exit 77; }
CONFIGS=("$@")
declare -A CPU FAULTS TIME
# Prints "task-clock-ms page-faults" of one run of every program of a configuration.
run_config() {
  local dir=$1 envs=$2 ms=0 pf=0 out
  IFS=';' read -ra ev <<<"$envs"
  for p in $PROGRAMS; do
    # shellcheck disable=SC2086 # ARGS is a list of arguments
    out=$(env -u PERFHAT_ENDPOINT "${ev[@]}" perf stat -x, -e task-clock,page-faults \
      "$dir/$p" $ARGS 2>&1 >/dev/null | grep -E ',(task-clock|page-faults),' || true)
    ms=$(awk -F, -v s="$ms" '$3 == "task-clock" {s += $1} END {print s}' <<<"$out")
    pf=$(awk -F, -v s="$pf" '$3 == "page-faults" {s += $1} END {print s}' <<<"$out")
  done
  echo "$ms $pf"
}
# Prints the user + system seconds of one run of every program of a configuration, in ms.
time_config() {
  local dir=$1 envs=$2 TIMEFORMAT='%U %S' out
  IFS=';' read -ra ev <<<"$envs"
  # shellcheck disable=SC2086 # ARGS is a list of arguments
  out=$( { time (for p in $PROGRAMS; do
    env -u PERFHAT_ENDPOINT "${ev[@]}" "$dir/$p" $ARGS >/dev/null 2>&1 || true
  done); } 2>&1)
  awk '{print ($1 + $2) * 1000}' <<<"$out"
}
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for ((r = 0; r < REPS; ++r)); do
  for c in "${CONFIGS[@]}"; do
    IFS='|' read -r name dir envs <<<"$c"
    TIME[$name]+="$(time_config "$dir" "${envs:-}") "
    read -r ms pf <<<"$(run_config "$dir" "${envs:-}")"
    CPU[$name]+="$ms "
    FAULTS[$name]+="$pf "
  done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
IFS='|' read -r first _ <<<"${CONFIGS[0]}"
bt=$(median <<<"${TIME[$first]}") b=$(median <<<"${CPU[$first]}") bf=$(median <<<"${FAULTS[$first]}")
runs_of() { tr ' ' '\n' <<<"$1" | grep -v '^$' | awk '{printf "%s%.0f", (NR > 1 ? " " : ""), $1}'; }
echo
echo "| configuration | user+sys ms (runs) | vs $first | task-clock ms | vs $first | page faults | vs $first |"
echo "|---|---|---|---|---|---|---|"
for c in "${CONFIGS[@]}"; do
  IFS='|' read -r name _ _ <<<"$c"
  t=$(median <<<"${TIME[$name]}") m=$(median <<<"${CPU[$name]}") f=$(median <<<"${FAULTS[$name]}")
  awk -v n="$name" -v t="$t" -v bt="$bt" -v m="$m" -v b="$b" -v f="$f" -v bf="$bf" \
    -v runs="$(runs_of "${TIME[$name]}")" 'BEGIN {
    printf "| %s | %.0f (%s) | %+.1f %% | %.1f | %+.1f %% | %d | %+d |\n", n, t, runs,
      (t / bt - 1) * 100, m, (m / b - 1) * 100, f, f - bf }'
done
