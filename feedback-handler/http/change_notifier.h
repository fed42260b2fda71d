// Wakes long-polls of `GET /v1/changes?since=C&wait_ms=N` when the store commits new data
// (ingest or upstream sync), so the language server refreshes hints about a second after data
// arrives instead of at its next 30 s poll.
//
// It is a generation counter under a condition variable: a waiter records generation() BEFORE
// it reads the store, so a commit between that read and the wait is never lost (the generation
// has already moved and the wait returns at once). Waiters re-read the store after each wake.
//
// Parked waiters each hold one HTTP worker thread, so their number is bounded by the caller
// (ingest must keep threads to run on); shutdown() wakes all of them so the server can stop
// without waiting out their timeouts.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>

#include "common/thread_annotations.h"

namespace perfhat::handler {

class ChangeNotifier {
 public:
  enum class WaitResult {
    kChanged,         // a commit happened since `seen`
    kTimeout,         // nothing committed within the timeout
    kShutdown,        // the server is stopping
    kTooManyWaiters,  // `max_waiters` are already parked; did not wait
  };

  // A successful store commit: wakes every waiter.
  void notify();
  uint64_t generation() const;
  // Blocks until generation() != seen, the timeout passes or shutdown(). Never parks more than
  // `max_waiters` callers at once.
  WaitResult wait(uint64_t seen, std::chrono::milliseconds timeout, size_t max_waiters);
  // Wakes all waiters; later waits return kShutdown at once.
  void shutdown();
  size_t waiters() const;

 private:
  mutable Mutex mu_;
  CondVar cv_;
  uint64_t generation_ GUARDED_BY(mu_) = 0;
  size_t waiters_ GUARDED_BY(mu_) = 0;
  bool shutdown_ GUARDED_BY(mu_) = false;
};

}  // namespace perfhat::handler
