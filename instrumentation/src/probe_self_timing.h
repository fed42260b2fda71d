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
// few hundred additions a second), which the controller reads once a window.
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

// What the timed call did: recorded (a span or an aggregate record), opened its request's context
// (a request root the budget took; recorded or not), or left Probe::begin unrecorded (a redraw
// after a capped skip run, with its logarithms; a request root passed over): the entry alone.
enum SelfTimedKind : int {
  kSelfTimedRecord = 0,
  kSelfTimedRequest = 1,
  kSelfTimedPassed = 2,
  kSelfTimedKinds = 3
};

struct SelfTimingTotals {
  uint64_t calls[kSelfTimedKinds] = {};
  uint64_t ticks[kSelfTimedKinds] = {};
  uint64_t dropped = 0;  // intervals over the cap (preempted or interrupted inside)
};

inline constexpr uint32_t kSelfTimingPeriod = 16;

// On while a collection budget is configured (budget::Controller::configure); off, no probe
// reads the extra clocks.
extern std::atomic<bool> g_self_timing;
// A timed call whose entry and exit intervals add up to more than this many ticks is not summed:
// its thread was descheduled or interrupted inside them (a millisecond's time slice would count
// as much as ten thousand calls). 0: no cap (set with the budget, from the clock's rate).
extern std::atomic<uint64_t> g_self_timing_cap;

// At a clocked entry (Probe::begin): whether this call is timed. The gap to the next timed one is
// uniform on [1, 2 kSelfTimingPeriod - 1] (mean kSelfTimingPeriod), drawn from the thread's
// generator: a fixed period aliases with periodic call patterns (a request root and one call in
// it, timed every 16th entry, timed only the roots).
inline bool self_timing_due(ThreadState* ts) noexcept {
  if (--ts->self_timing_left != 0) return false;
  uint64_t x = ts->hot.rng;  // xorshift64, as the phase-1 countdown draws
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  ts->hot.rng = x;
  ts->self_timing_left = 1 + static_cast<uint32_t>(x % (2 * kSelfTimingPeriod - 1));
  return ts->self_timing_on && g_self_timing.load(std::memory_order_relaxed);
}

// A timed call's two intervals (Probe::leave).
void note_self_timing(SelfTimedKind kind, uint64_t ticks) noexcept;
// The sums so far, over every thread.
SelfTimingTotals self_timing_totals() noexcept;

}  // namespace perfhat::detail
