// The probe times its own out-of-line work in situ, for the collection budget's prices
// (budget_insitu.h). The start-up calibration times a probe in a tight loop on a private slot,
// with every line it touches warm; in a service the same work runs among the program's own, with
// its thread state, span ring and code evicted between calls, and on the sample service perf
// filed about twice as much under the probes as the calibrated prices charged (bench/README.md).
//
// With a budget on, one in kSelfTimingPeriod clocked entries on each thread reads a fenced clock
// at the start of Probe::begin; if the call turns out recorded (or opens its request's context)
// the interval up to its start clock read is its entry work, and Probe::leave adds the interval
// from its end clock read to the end of its exit work. The sums go to process-wide counters (a
// few hundred additions a second), which the controller reads once a window. A timed call's end
// clock is fenced too, so the function's last loads are not charged to the probe. The intervals
// hold the clock reads' own cost, which differs by how each is bounded: the exit interval, and a
// passed entry's, run from a fenced read to a fenced read (a back-to-back fenced pair: 49 ticks
// at least, 64 on average, on a 2.4 GHz x86 VM); a recorded call's entry interval runs from a
// fenced read to the plain start clock read, less (one fence fewer). The least of a few
// back-to-back reads of each pattern is measured with the budget's start-up calibration and taken
// off each timed call (saturating at 0), so a probe that times near its floor is not charged the
// timing's own cost.
#pragma once

#include <atomic>
#include <cstdint>

#include "engine.h"

namespace perfhat::detail {

// The tick clock, but no instruction starts before it is read and none after it starts before
// every earlier one finished: a single call's cache misses land inside the interval (a plain
// TSC read lets the second read run ahead of the call's outstanding loads).
inline uint64_t fenced_ticks() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  if (g_tick_source.load(std::memory_order_relaxed) == nullptr) {
    _mm_lfence();
    const uint64_t t = __rdtsc();
    _mm_lfence();
    return t;
  }
#endif
  std::atomic_thread_fence(std::memory_order_seq_cst);
  const uint64_t t = now_ticks();
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return t;
}

// The tick clock once every earlier load and store has completed (stores included, which an
// lfence does not wait for): the start clock of a sparse timed call. Its bookkeeping ran on cold
// lines, and with a plain read those misses and stores finish inside the function's interval
// (bench/README.md, "Collection budget: a sampled call's start clock after its stores").
inline uint64_t settled_ticks() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  if (g_tick_source.load(std::memory_order_relaxed) == nullptr) {
    _mm_mfence();
    _mm_lfence();
    return __rdtsc();
  }
#endif
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return now_ticks();
}

// What the timed call did: recorded (a span or an aggregate record), opened its request's context
// (a request root the budget took; recorded or not), or left Probe::begin unrecorded (a redraw
// after a capped skip run, with its logarithms; a request root passed over): the entry alone.
enum SelfTimedKind : int {
  kSelfTimedRecord = 0,
  kSelfTimedRequest = 1,
  kSelfTimedPassed = 2,
  kSelfTimedKinds = 3
};

// Intervals by log2 of their ticks: bucket b holds [2^b, 2^(b+1)) (0 and 1 tick in bucket 0,
// the last bucket everything longer), so the prices can leave out the few a preemption or an
// interrupt lengthened (budget_insitu.cc) instead of averaging them in.
inline constexpr int kSelfTimingBuckets = 40;
inline int self_timing_bucket(uint64_t ticks) noexcept {
  const int b = ticks < 2 ? 0 : 63 - __builtin_clzll(ticks);
  return b < kSelfTimingBuckets ? b : kSelfTimingBuckets - 1;
}

struct SelfTimingTotals {
  uint64_t calls[kSelfTimedKinds] = {};
  uint64_t ticks[kSelfTimedKinds] = {};
  uint64_t bucket_calls[kSelfTimedKinds][kSelfTimingBuckets] = {};
  uint64_t bucket_ticks[kSelfTimedKinds][kSelfTimingBuckets] = {};
  uint64_t dropped = 0;  // intervals over the cap (preempted or interrupted inside)

  // n intervals of `ticks` each.
  void add(SelfTimedKind kind, uint64_t ticks, uint64_t n = 1) noexcept {
    const int b = self_timing_bucket(ticks);
    calls[kind] += n;
    this->ticks[kind] += n * ticks;
    bucket_calls[kind][b] += n;
    bucket_ticks[kind][b] += n * ticks;
  }
};

inline constexpr uint32_t kSelfTimingPeriod = 16;

// On while a collection budget is configured (budget::Controller::configure); off, no probe
// reads the extra clocks.
alignas(64) extern std::atomic<bool> g_self_timing;
// A timed call whose entry and exit intervals add up to more than this many ticks is not summed:
// its thread was descheduled or interrupted inside them (a millisecond's time slice would count
// as much as ten thousand calls). 0: no cap (set with the budget, from the clock's rate).
alignas(64) extern std::atomic<uint64_t> g_self_timing_cap;
// The clock reads' own cost in ticks (0 until the budget measured it): a fenced read to a fenced
// read (an exit interval, a passed entry), and a fenced read to a plain one (a recorded call's
// or a request root's entry interval).
alignas(64) extern std::atomic<uint64_t> g_self_timing_fence;
alignas(64) extern std::atomic<uint64_t> g_self_timing_entry_fence;
struct SelfTimingFences {
  uint64_t pair = 0;   // fenced_ticks() to fenced_ticks()
  uint64_t entry = 0;  // fenced_ticks() to now_ticks()
};
// The least of a few back-to-back reads of each pattern on the calling thread (ticks).
SelfTimingFences measure_fence_ticks() noexcept;

// At a clocked entry (Probe::begin): whether this call is timed. The gap to the next timed one is
// uniform on [1, 2 kSelfTimingPeriod - 1] (mean kSelfTimingPeriod), drawn from the thread's
// generator: a fixed period aliases with periodic call patterns (a request root and one call in
// it, timed every 16th entry, timed only the roots).
// The thread's first gap is drawn when it registers (registry.cc), so its first clocked entry,
// the one that faults in its slots and rings, is timed no more often than any other.
inline void draw_self_timing_gap(ThreadState* ts) noexcept {
  uint64_t x = ts->hot.rng;  // xorshift64, as the phase-1 countdown draws
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  ts->hot.rng = x;
  ts->self_timing_left = 1 + static_cast<uint32_t>(x % (2 * kSelfTimingPeriod - 1));
}
inline bool self_timing_due(ThreadState* ts) noexcept {
  if (--ts->self_timing_left != 0) return false;
  draw_self_timing_gap(ts);
  return ts->self_timing_on && g_self_timing.load(std::memory_order_relaxed);
}

// A timed call's intervals, `ticks` in all, the clock reads' cost included (a recorded call or a
// request root: its entry and its exit interval; an entry that left unrecorded: one fenced pair).
void note_self_timing(SelfTimedKind kind, uint64_t ticks) noexcept;
// The sums so far, over every thread.
SelfTimingTotals self_timing_totals() noexcept;

}  // namespace perfhat::detail
