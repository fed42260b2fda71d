#include "server/feedback/change_watcher.h"

#include <algorithm>
#include <random>

namespace perfhat::feedback {

ChangeWatcher::ChangeWatcher(std::shared_ptr<FeedbackProvider> provider, WatchOptions options,
                             OnChange on_change, OnProblem on_problem)
    : provider_(std::move(provider)),
      options_(options),
      on_change_(std::move(on_change)),
      on_problem_(std::move(on_problem)),
      thread_([this] { loop(); }) {}

ChangeWatcher::~ChangeWatcher() { stop(); }

void ChangeWatcher::stop() {
  MutexLock lock(mu_);
  stopping_ = true;
  cv_.notifyAll();
  // A long-poll may be blocked in the source. Cancelling can race with the request being
  // issued (nothing to cancel yet), so repeat until the thread has left its loop.
  while (!done_) {
    lock.unlock();
    provider_->cancelPoll();
    lock.lock();
    if (!done_) cv_.waitFor(lock, std::chrono::milliseconds(50));
  }
  lock.unlock();
  if (thread_.joinable()) thread_.join();
}

bool ChangeWatcher::longPolling() const {
  MutexLock lock(mu_);
  return long_poll_;
}

bool ChangeWatcher::sleepFor(std::chrono::milliseconds d) {
  MutexLock lock(mu_);
  const auto deadline = std::chrono::steady_clock::now() + d;
  while (!stopping_) {
    if (cv_.waitUntil(lock, deadline) == std::cv_status::timeout) break;
  }
  return !stopping_;
}

std::chrono::milliseconds ChangeWatcher::backoff(int failures) {
  // Full jitter: uniform in [min, min·2^(failures−1)] capped at max.
  thread_local std::mt19937_64 rng{std::random_device{}()};
  double cap = std::min<double>(static_cast<double>(options_.max_backoff.count()),
                                static_cast<double>(options_.min_backoff.count()) *
                                    static_cast<double>(1u << std::min(failures - 1, 16)));
  double lo = std::min<double>(static_cast<double>(options_.min_backoff.count()), cap);
  std::uniform_real_distribution<double> d(lo, cap);
  return std::chrono::milliseconds(static_cast<int64_t>(d(rng)));
}

void ChangeWatcher::loop() {
  int failures = 0;
  for (;;) {
    bool long_poll;
    {
      MutexLock lock(mu_);
      if (stopping_) break;
      long_poll = long_poll_;
    }
    ChangesResult r = provider_->poll(long_poll ? static_cast<int>(options_.wait.count()) : 0);
    {
      MutexLock lock(mu_);
      if (stopping_) break;
    }
    if (r.status != FetchStatus::Ok) {
      ++failures;
      if (on_problem_ && failures == 1) on_problem_("change feed: " + r.error + "; retrying");
      {
        MutexLock lock(mu_);
        long_poll_ = true;  // the handler may come back as a newer version
      }
      if (!sleepFor(backoff(failures))) break;
      continue;
    }
    failures = 0;
    if (r.all || !r.keys.empty()) on_change_(r);
    if (long_poll && !r.waited) {
      {
        MutexLock lock(mu_);
        long_poll_ = false;
      }
      if (on_problem_) {
        on_problem_("change feed: " + provider_->source().describe() +
                    " does not support long-poll (wait_ms); polling every " +
                    std::to_string(options_.poll_interval.count() / 1000) + " s");
      }
    }
    if (!long_poll || !r.waited) {
      if (!sleepFor(options_.poll_interval)) break;
    }
  }
  MutexLock lock(mu_);
  done_ = true;
  cv_.notifyAll();
}

}  // namespace perfhat::feedback
