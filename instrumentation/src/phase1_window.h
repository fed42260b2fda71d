// Tigris phase 1 in counting windows (XRay mode, xray_window.cc): every function's sled is
// patched while a window counts, and after it only the functions the cycle selected stay patched;
// the next window opens after the window's length times (1 - duty) / duty. A function is then
// counted only part of the time, so its count-like phase-1 metrics are scaled by the inverse of
// that part before Tigris groups them: a stationary workload gives the same relevance in
// expectation as counting every call (phase1_window_test.cc checks it on a fixed call stream).
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "tigris.h"

namespace perfhat::detail {

struct Site;

// Config::phase1_window_calls and Config::phase1_duty of the running configuration.
extern std::atomic<uint64_t> g_phase1_window_calls;
// Config::phase1_window_ms of the running configuration, in nanoseconds (0: no time bound).
extern std::atomic<uint64_t> g_phase1_window_ns;
// Config::phase1_function_calls of the running configuration (0: functions stay to the close).
extern std::atomic<uint32_t> g_phase1_function_calls;
extern std::atomic<double> g_phase1_duty;
// The counting windows' scale of a site's count-like metrics (elapsed time / time its calls were
// counted, >= 1); nullptr or a site phase 1 always counts: 1. Set by the XRay mode; called by
// the analysis under the engine's lock, so it takes only a lock of its own.
extern std::atomic<double (*)(const Site& site)> g_phase1_scale;
// Called by the engine's background thread at each one-second tick: the XRay mode opens the next
// counting window when it is due.
extern std::atomic<void (*)()> g_phase1_tick;
// Called by the exit-time flush before the engine stops: the XRay mode writes down its selection
// for the program's next process (selection_store.h).
extern std::atomic<void (*)()> g_phase1_exit;
// Set while the relevant set is one carried from the program's last process: the engine's
// periodic cycle waits for this process's own counting window (it has counted nothing else).
extern std::atomic<bool> g_phase1_carried;

// Scales a function's phase-1 metrics for a function counted 1 / `scale` of the time: counts
// (invocations, errors, concurrent executions) up, the inter-arrival time down. Execution time,
// computation pattern and static metrics are means or not counted: unchanged.
void scale_phase1_metrics(tigris::EventMetrics& e, double scale);

// Whether a counting window that has seen `calls` calls and opened at `start` (ns) is over at
// `now` (ns): it reached its length in calls, or in time (a program that makes few calls, or
// ends soon, still gets its selection). A bound of 0 is no bound.
struct WindowBound {
  uint64_t max_calls = 0;
  uint64_t max_ns = 0;
  bool reached_calls(uint64_t calls) const { return max_calls != 0 && calls >= max_calls; }
  bool reached_time(uint64_t start, uint64_t now) const {
    return max_ns != 0 && now >= start && now - start >= max_ns;
  }
  // Whether a function may leave the window (phase1_function_calls) at `now`: only once half the
  // window's time bound has passed (without one, half its calls), so that the rate it is counted
  // at before it leaves is measured over at least half the window: a function whose calls came
  // early (a start-up burst) is over-estimated at most 2x, not elapsed / its first calls' time.
  // Nor once the window is over: its close is due, and a leave (a patching call, under the lock
  // the close needs) would only delay it while the program's threads run on.
  bool may_leave(uint64_t start, uint64_t now, uint64_t calls) const {
    if (reached_calls(calls) || reached_time(start, now)) return false;
    if (max_ns != 0) return now >= start && now - start >= max_ns / 2;
    return max_calls != 0 && calls >= max_calls / 2;
  }
};

// Per function (a dense index, XRay's function id), the time its calls were counted: all of them
// inside a window until they leave it early, the kept ones also between windows. Times are any
// monotonic unit. Not thread-safe: its owner locks.
class CountedTime {
 public:
  // A window opens at `now`: every function is counted from here.
  void open(uint64_t now);
  // Function i stops being counted at `now`, before the open window closes (it has given the
  // window enough calls: phase1_function_calls). Whether it newly left: false if no window is
  // open or it already left this one.
  bool leave(size_t i, uint64_t now);
  // Room for functions 0..n-1, so that leave() allocates nothing (called from program functions'
  // exit handlers).
  void reserve(size_t n) { grow(n); }
  // The window closes at `now`; kept[i]: function i stays counted until the next window.
  void close(uint64_t now, const std::vector<bool>& kept);
  bool is_open() const { return open_; }
  // The start of the current or last window.
  uint64_t window_start() const { return window_start_; }
  // Elapsed time since the first window / time function i was counted (1 before any window and
  // while nothing was ever left out).
  double scale(size_t i, uint64_t now) const;

 private:
  bool started_ = false, open_ = false;
  uint64_t first_ = 0, window_start_ = 0;
  uint64_t in_windows_ = 0;           // closed windows' total length
  std::vector<uint64_t> kept_;        // per function: time counted between windows (closed spans)
  std::vector<uint64_t> kept_since_;  // per function: kept since (+1; 0 = not kept now)
  std::vector<uint64_t> left_;        // per function: time not counted inside closed windows
  std::vector<uint64_t> left_since_;  // per function: left the open window at (+1; 0 = not)
  void grow(size_t n);
};

}  // namespace perfhat::detail
