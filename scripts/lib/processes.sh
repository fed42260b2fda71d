# Background processes for the scripts that run perfhat's binaries (demo, benchmarks).
# Source it, then call scratch_dir (or set TMP, a scratch directory for logs, yourself); it keeps
# PIDS and provides:
#
#   start NAME CMD...   starts CMD in the background with its output in $TMP/NAME.log and waits,
#                       bounded (PERFHAT_START_TIMEOUT_S, default 60 s: a loaded machine is slow),
#                       until it prints "listening on [http://]HOST:PORT";
#                       sets ADDR=HOST:PORT and LAST_PID. Exits the script if CMD dies first.
#   stop_all            SIGTERM to everything started, then waits for it.
#   stop_each PID...    SIGTERM to each, then waits for it (a service flushes on the way out).
#   drive_agile RATE DURATION REQUESTS ADDR...
#                       one stationary agile-workload ($BUILD/samples) per service address, seeds
#                       7, 8, ... in order, all at once; returns when every one has finished.
#   scratch_dir NAME [KEEP_VAR]
#                       sets TMP to a new scratch directory ($TMPDIR/NAME.XXXXXX) and, when the
#                       script exits, stops everything started and removes TMP, or keeps it (and
#                       says where) when the variable named KEEP_VAR is 1. The exit status stays.
#
# Every perfhat server prints that "listening on" line once it accepts connections, so the
# caller never races the bind.
PIDS=()

start() {
  local name=$1; shift
  # Created here, not by the background redirection: the first read below may run before the
  # background shell has opened it (sed would fail, and set -e end the script).
  : >"$TMP/$name.log"
  "$@" >>"$TMP/$name.log" 2>&1 &
  LAST_PID=$!
  PIDS+=("$LAST_PID")
  local tries=$(( ${PERFHAT_START_TIMEOUT_S:-60} * 10 ))
  for _ in $(seq "$tries"); do
    ADDR=$(sed -n 's/.*listening on \(http:\/\/\)\{0,1\}\([0-9.]*:[0-9][0-9]*\).*/\2/p' \
             "$TMP/$name.log" | head -n1)
    [ -n "$ADDR" ] && return 0
    if ! kill -0 "$LAST_PID" 2>/dev/null; then
      cat "$TMP/$name.log" >&2
      echo "$name exited during start-up" >&2
      exit 1
    fi
    sleep 0.1
  done
  cat "$TMP/$name.log" >&2
  echo "$name did not start listening within ${PERFHAT_START_TIMEOUT_S:-60} s" >&2
  exit 1
}

stop_all() {
  local pid
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
}

scratch_dir() {
  TMP=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")
  _scratch_label=${1#perfhat-}
  _scratch_keep=${2:-}
  trap _scratch_cleanup EXIT
}

_scratch_cleanup() {
  local rc=$?
  stop_all
  if [ -n "$_scratch_keep" ] && [ "${!_scratch_keep:-0}" = 1 ]; then
    echo "$_scratch_label: kept $TMP"
  else
    rm -rf "$TMP"
  fi
  exit $rc
}

stop_each() {
  local pid
  for pid in "$@"; do kill -TERM "$pid"; wait "$pid" 2>/dev/null || true; done
}

drive_agile() {
  local rate=$1 duration=$2 requests=$3 i=0 addr w=() p
  shift 3
  for addr in "$@"; do
    "$BUILD/samples/agile-workload" --target "http://$addr" --shape stationary --rate "$rate" \
      --requests "$requests" --duration "$duration" --workers 2 --seed $((7 + i)) --quiet &
    w+=($!)
    i=$((i + 1))
  done
  for p in "${w[@]}"; do wait "$p"; done
}
