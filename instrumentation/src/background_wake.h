// The wake of the engine's background thread that the probes ask for when a thread's ring is
// half full. The probes' path takes no lock, so a notify that comes while the background thread
// is busy (exporting, folding) finds no waiter: before, that wake was lost and the thread then
// slept a whole timed wait (up to a second) while the rings kept filling, and a burst's spans
// went to the aggregates or its calls were dropped. Here a request is kept until the thread's
// next wait, which then returns at once. A request that lands between the waiter's check and its
// wait still loses its notify; the wait then ends on its time as before, with the request taken.
#pragma once

#include <atomic>
#include <chrono>

#include "thread_annotations.h"

namespace perfhat::detail {

class BackgroundWake {
 public:
  // Any thread, no lock: wakes the waiter, or its next wait if it is not waiting now.
  void request() noexcept {
    pending_.store(true, std::memory_order_release);
    cv_.notifyOne();
  }
  // Wakes the waiter for a state change made under its mutex (a stop), not counted as a request.
  void notify_all() { cv_.notifyAll(); }
  // The waiter, holding `lock`: returns at once if a wake was requested since its last wait, else
  // waits up to `d`. Returns whether a request ended (or preceded) the wait; either way it is
  // taken.
  template <typename Rep, typename Period>
  bool wait(MutexLock& lock, const std::chrono::duration<Rep, Period>& d) {
    if (pending_.exchange(false, std::memory_order_acq_rel)) return true;
    cv_.waitFor(lock, d);
    return pending_.exchange(false, std::memory_order_acq_rel);
  }

 private:
  std::atomic<bool> pending_{false};
  CondVar cv_;
};

}  // namespace perfhat::detail
