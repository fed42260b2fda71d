#!/usr/bin/env bash
# XRay mode end to end: a program built with clang++ -fxray-instrument and perfhat::xray records
# the functions in scope (nesting kept), unpatches the others, patches nothing when probes are
# off, closes the frame of a function left by an exception (XRay reports no exit), and with a
# Tigris filter keeps only the selected functions patched after a counting window. Skipped (77)
# without a clang++ that has the XRay runtime.
#   xray_test.sh <source-dir> <libperfhat.a> <libperfhat_xray.a> <work-dir>
set -euo pipefail
SRC=$1 CORE=$2 XRAY=$3 WORK=$4
CLANG=$(command -v clang++-14 || command -v clang++ || true)
[[ -n $CLANG ]] || { echo "no clang++: skipped"; exit 77; }
mkdir -p "$WORK"
if ! "$CLANG" -std=c++20 -O2 -fxray-instrument -fxray-instruction-threshold=1 \
    -I"$SRC/instrumentation/include" -I"$SRC/instrumentation/src" -I"$SRC/instrumentation" \
    "$SRC/instrumentation/tests/xray/xray_app.cc" \
    -o "$WORK/xray_app" -Wl,--undefined=perfhat_xray_anchor "$XRAY" "$CORE" -lpthread -ldl \
    2>"$WORK/build.log"; then
  if grep -q "xray" "$WORK/build.log" && grep -qi "cannot find\|No such file" "$WORK/build.log"; then
    echo "clang's XRay runtime is not installed (libclang-rt-dev): skipped"; exit 77
  fi
  cat "$WORK/build.log"; exit 1
fi
fail() { echo "FAIL: $*"; exit 1; }
# No selection is carried between the runs below (each starts counting) but in the section that
# tests it.
export PERFHAT_SELECTION_DIR=off

on=$(PERFHAT_SAMPLER=full PERFHAT_SCOPE='xapp::*,-xapp::skipped*' PERFHAT_ENDPOINT= "$WORK/xray_app")
echo "on:  $on"
[[ $on == *"leaf=200 middle=100 skipped=0 nested=1 unwound=1"* ]] || fail "scope or nesting: $on"
unpatched=$(sed -E 's/.*unpatched=([0-9]+).*/\1/' <<<"$on")
((unpatched >= 2)) || fail "skipped() and main() should be unpatched: $on"

off=$(PERFHAT_ENABLED=0 PERFHAT_SAMPLER=full PERFHAT_ENDPOINT= "$WORK/xray_app")
echo "off: $off"
[[ $off == *"leaf=0 middle=0 skipped=0 nested=0 unwound=0 functions=0 unpatched=0"* ]] ||
  fail "off: $off"
# Every function's address comes from one pass over the sled map at start-up, and agrees with
# XRay's own per-id look-up.
addrs=$(PERFHAT_SAMPLER=full PERFHAT_ENDPOINT= "$WORK/xray_app" addresses)
echo "addresses: $addrs"
[[ $addrs =~ ^map=1\ functions=([0-9]+)\ mismatches=0$ ]] && ((BASH_REMATCH[1] > 10)) ||
  fail "function addresses: $addrs"
# Calls that return while their sleds are unpatched (a window's close) under a loop that never
# returns: each one's frame is ended at the next call at its level, not left open (wrong parents,
# and past 256 open frames the thread recorded nothing more).
stale=$(PERFHAT_SAMPLER=full PERFHAT_SCOPE='xstale::*' PERFHAT_PHASE1_WINDOW_CALLS=0 \
  PERFHAT_ENDPOINT= "$WORK/xray_app" stale)
echo "stale: $stale"
[[ $stale == *"loop=1 steps=300 steps_under_loop=300 probe_under_loop=1 leaf_under_probe=1" ]] ||
  fail "frames of calls returned unreported: $stale"
# Tigris phase 1 in a counting window: after it closes, only the selected function's sleds are
# patched (its calls are all still counted), the others' calls are no longer seen.
# The window closes at its length in calls (no time bound), or in time (a call bound it never
# reaches, 1 ms): checked at a thread's batch of calls, or at the background thread's tick when
# the threads make too few calls for a batch (window-idle).
# A duty of 1e-6 keeps the window closed for a million times its length (at least 1 s past
# start-up otherwise): a loaded machine's slow run must not see a second window reopen.
window() {
  PERFHAT_SAMPLER=full PERFHAT_SCOPE='xwin::*' PERFHAT_FILTER='most frequent' \
    PERFHAT_PHASE1_DUTY=0.000001 PERFHAT_PHASE1_WINDOW_CALLS=$1 PERFHAT_PHASE1_WINDOW_MS=$2 PERFHAT_EXPORT=aggregates \
    PERFHAT_CYCLE_S=1000000 PERFHAT_EXPORT_INTERVAL_S=1000000 PERFHAT_ENDPOINT= \
    "$WORK/xray_app" "${3:-window}"
}
# A window closed by time counts what the threads called since start-up within 1 ms: on a loaded
# machine that can be a single batch, too few calls for a reliable selection (the hot function was
# left out in 1 of 20 runs, and in 2 of 10 with window-idle's 240 calls). These check the close and
# the unpatching, not what was selected: one window, no cold call after it, and the hot function's
# calls all seen if it was kept, none if not.
closed_by_time() {
  [[ $1 =~ ^closed=1\ kept=([01])\ hot_after=([0-9]+)\ cold_after=0$ ]] || return 1
  ((BASH_REMATCH[1] == 1 ? BASH_REMATCH[2] == 16000 : BASH_REMATCH[2] == 0))
}
# The windows below are counted in calls, 2^20 of them (about 0.1 s of the threads' calls):
# far longer than a time slice, since a thread that holds the transition lock (a leave's patching
# call, up to 1 ms on a 2-vCPU VM) can be descheduled by the other three for one while they run
# on, and a window of 8,192 calls then ran past its length or lost a function's only chance to
# leave (in 10 of 20 rounds of these sections on an idle 2-vCPU VM).
W=1048576
# A function leaves the window once it has given it PERFHAT_PHASE1_FUNCTION_CALLS calls, only
# from half the window (2^19 calls without a time bound; a check before that starts its count
# again) and not once it is over: with 131,072, hot() (8 of every 15 calls, a check every 245,760
# calls) leaves at about 737,000 (or 983,000), the cold ones (a check every 1,966,080) never.
win=$(PERFHAT_PHASE1_FUNCTION_CALLS=131072 window $W 0 window-leave)
echo "window (calls): $win"
[[ $win == "closed=1 kept=1 hot_after=16000 cold_after=0 left=1" ]] || fail "counting window: $win"
win=$(PERFHAT_PHASE1_FUNCTION_CALLS=0 window $W 0 window-leave)
echo "window (no function leaves): $win"
[[ $win == "closed=1 kept=1 hot_after=16000 cold_after=0 left=0" ]] ||
  fail "PERFHAT_PHASE1_FUNCTION_CALLS=0: $win"
# 0 given by a later perfhat::init keeps every function too, although start-up set the countdowns
# from the environment (1,024 by default): hot()'s first check, before half the window, makes it
# never checked again (a countdown of 0 would check it at every exit, and it would leave past half).
win=$(window $W 0 window-leave-later0)
echo "window (0 from a later init): $win"
[[ $win == "closed=1 kept=1 hot_after=16000 cold_after=0 left=0" ]] ||
  fail "PERFHAT_PHASE1_FUNCTION_CALLS=0 from a later init: $win"
# And when start-up's countdown first runs out past half the window (400,000 hot calls, about
# 750,000 window calls): that check does not leave either.
win=$(PERFHAT_PHASE1_FUNCTION_CALLS=400000 window $W 0 window-leave-later0)
echo "window (0 from a later init, first check past half): $win"
[[ $win == "closed=1 kept=1 hot_after=16000 cold_after=0 left=0" ]] ||
  fail "PERFHAT_PHASE1_FUNCTION_CALLS=0 from a later init, past half: $win"
# Every function leaves after 64 calls once half the window's calls have passed, before its
# length: the window, with no time bound, closes at the background thread's tick once no call
# came for a whole tick. Functions leave one at a time (one patching call each), so 2^22 calls
# leave 2 million of them for eight leaves.
win=$(PERFHAT_PHASE1_FUNCTION_CALLS=64 window $((W * 4)) 0 window-leave)
echo "window (all left): $win"
[[ $win =~ ^(.*)\ left=8$ ]] && closed_by_time "${BASH_REMATCH[1]}" ||
  fail "window every function left: $win"
# The selection carried to the program's next process (selection_store.h). A run whose window
# closes leaves hot() selected; the next run of the same program and configuration patches only
# hot(), relevant from its first call (all 16,000 calls recorded, no cold one seen), takes the
# hooks' calibration and hot()'s name from the file (it reads no symbol table) and writes nothing; a process counts at start-up with
# probability `duty` (1e-6 here: never; 1: always). Another scope, a malformed file or none make
# the process count again.
sel=$WORK/selections
rm -rf "$sel"
export -n PERFHAT_SELECTION_DIR
carry() {
  PERFHAT_SELECTION_DIR=$sel PERFHAT_SAMPLER=full PERFHAT_SCOPE=${SCOPE:-'xwin::*'} \
    PERFHAT_FILTER='most frequent' PERFHAT_PHASE1_DUTY=${DUTY:-0.000001} PERFHAT_PHASE1_FUNCTION_CALLS=0 \
    PERFHAT_PHASE1_WINDOW_CALLS=${CALLS:-8192} PERFHAT_PHASE1_WINDOW_MS=0 PERFHAT_EXPORT=aggregates \
    PERFHAT_CYCLE_S=1000000 PERFHAT_EXPORT_INTERVAL_S=${INTERVAL:-1000000} PERFHAT_ENDPOINT= \
    "$WORK/xray_app" "$@"
}
costs() { sed -n '/^costs /{n;p}' "$sel"/*.sel; }
win=$(carry window)
echo "carry, the window closes: $win"
[[ $win == "closed=1 kept=1 hot_after=16000 cold_after=0" ]] || fail "carry, first run: $win"
[[ $(ls "$sel") == *.sel && $(sed -n 's/^selected //p' "$sel"/*.sel) == 1 ]] ||
  fail "no selection of one function left in $sel: $(cat "$sel"/* 2>&1)"
hot_id=$(sed -n '/^selected /{n;p}' "$sel"/*.sel)
# The hooks' calibration goes with it: a carried run measures nothing (calibrated=0); a run
# that counts measures them again.
costs1=$(costs)
[[ -n $costs1 ]] || fail "no calibration carried: $(cat "$sel"/*.sel)"
file1=$(cat "$sel"/*.sel)
got=$(carry carry)
echo "carried: $got"
[[ $got == "carried=1 closed=0 hot=16000 cold=0 calibrated=0 tables=0" ]] || fail "carried selection: $got"
[[ $(cat "$sel"/*.sel) == "$file1" ]] || fail "a carried run wrote: $file1 -> $(cat "$sel"/*.sel)"
# Without perfhat::init() (a program without source changes): a carried run has no background
# thread before its first recorded call and starts it on demand once calls come after its first
# export would have (an interval of 0.1 s here); a run that counts starts it at once.
got=$(INTERVAL=0.1 carry carry-thread)
echo "carried, the background thread: $got"
[[ $got == "carried=1 threads_before=1 threads_after=2" ]] || fail "carried, background thread: $got"
got=$(INTERVAL=0.1 DUTY=1 carry carry-thread)
echo "counting, the background thread: $got"
[[ $got == "carried=0 threads_before=2 threads_after=2" ]] || fail "counting, background thread: $got"
got=$(DUTY=1 carry carry)
echo "carried, a window drawn: $got"
[[ $got == carried=0\ *calibrated=1\ * ]] || fail "a due window did not open: $got"
# With a duty of 0.5 a process counts or starts carried as a fair coin falls: of 20, both happen
# (all 20 alike: about 2 in a million).
counted=0 carried=0
for i in $(seq 20); do
  case $(DUTY=0.5 carry carry) in carried=0\ *) counted=$((counted + 1)) ;; carried=1\ *) carried=$((carried + 1)) ;; esac
done
echo "duty 0.5, 20 runs: $counted counted, $carried carried"
((counted > 0 && carried > 0 && counted + carried == 20)) || fail "duty 0.5: $counted counted, $carried carried"
got=$(SCOPE='xwin::*,-xwin::cold0*' carry carry)
echo "carried, another scope: $got"
[[ $got == carried=0\ * ]] || fail "another configuration's selection was carried: $got"
rm -rf "$sel"
got=$(CALLS=1000000000000 carry carry)
echo "a run ending inside its window: $got"
[[ $got == "carried=0 closed=0 "* ]] || fail "a window closed: $got"
[[ $(sed -n '/^selected /{n;p}' "$sel"/*.sel) == "$hot_id" ]] ||
  fail "the exit's cycle did not select hot(): $(cat "$sel"/*.sel)"
got=$(CALLS=1000000000000 carry carry)
echo "and the next run: $got"
[[ $got == "carried=1 closed=0 hot=16000 cold=0 calibrated=0 tables=0" ]] || fail "selection made at exit: $got"
for f in "$sel"/*.sel; do printf 'perfhat-selection 1\nprogram x\n' >"$f"; done
got=$(carry carry)
echo "a malformed file: $got"
[[ $got == carried=0\ * ]] || fail "a malformed selection was carried: $got"
export PERFHAT_SELECTION_DIR=off
win=$(window 1000000000000 1)
echo "window (time):  $win"
closed_by_time "$win" || fail "timed window: $win"
win=$(window 1000000000000 1 window-idle)
echo "window (tick):  $win"
closed_by_time "$win" || fail "window closed at the tick: $win"
# Overhead compensation: a parent calling 32 tiny children reports its uninstrumented time within
# 35 % compensated (median per call, same run) on a quiet host, and not without (the children's
# sleds and hooks). The costs are measured once, at start-up, by a tight loop: at load 12-14 the
# hooks' cost inside the workload moved away from them between runs (compensated -3 % to -54 %,
# not compensated +71 % to +78 %), and a host whose other guests share the core slows the hooks
# in this workload more than the calibration's loop, a state the guest cannot tell from a quiet
# host (docs/auto-instrumentation.md, "Overhead compensation"). So, as in
# InstrAutoInstrument.CompensatedNestedWorkloadReportsItsUninstrumentedTime: up to 8 attempts
# spread over about half a second; one must show the probes' cost uncompensated (over 25 %) and
# compensated either within the quiet host's 35 % or to under 40 % of that cost (|compensated| /
# uncompensated), the latter what a host in that state still allows.
nested() {
  PERFHAT_SAMPLER=none PERFHAT_SCOPE='xnest::*' PERFHAT_ENDPOINT= PERFHAT_COMPENSATE=$1 \
    "$WORK/xray_app" nested
}
err() { sed -nE 's/nested error (-?[0-9]+) %.*/\1/p' <<<"$1"; }
# share E U: |E| / U in percent (E, U whole percents; U <= 0 counts as nothing removed).
share() { if (($2 > 0)); then echo $((${1#-} * 100 / $2)); else echo 100000; fi; }
best_e='' best_u='' best_comp=''  # the attempt leaving the smallest share, for the report
passed=''
for attempt in 1 2 3 4 5 6 7 8; do
  ((attempt > 1)) && sleep 0.06
  if ! comp=$(nested 1) || ! uncomp=$(nested 0); then
    fail "nested workload: too few timed calls"
  fi
  echo "compensated:     $comp"
  echo "not compensated: $uncomp"
  e=$(err "$comp") u=$(err "$uncomp")
  if [[ -z $best_e ]] || (($(share "$e" "$u") < $(share "$best_e" "$best_u"))); then
    best_e=$e best_u=$u best_comp=$comp
  fi
  if ((u > 25)) && { ((e > -35 && e < 35)) || (($(share "$e" "$u") < 40)); }; then
    passed=$attempt
    break
  fi
done
[[ -n $passed ]] || fail "no attempt compensated the probes' cost (best: $best_comp; not" \
  "compensated $best_u %, $(share "$best_e" "$best_u") % of it left)"
echo "attempt $passed passed: compensated $e %, not compensated $u %"
echo PASS
