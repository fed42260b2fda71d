#include "feedback-handler/http/change_notifier.h"

namespace perfhat::handler {
void ChangeNotifier::notify() {
  {
    MutexLock lock(mu_);
    ++generation_;
  }
  cv_.notifyAll();
}

uint64_t ChangeNotifier::generation() const {
  MutexLock lock(mu_);
  return generation_;
}

ChangeNotifier::WaitResult ChangeNotifier::wait(uint64_t seen, std::chrono::milliseconds timeout,
                                                size_t max_waiters) {
  MutexLock lock(mu_);
  if (shutdown_) return WaitResult::kShutdown;
  if (generation_ != seen) return WaitResult::kChanged;
  if (waiters_ >= max_waiters) return WaitResult::kTooManyWaiters;
  ++waiters_;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!shutdown_ && generation_ == seen) {
    if (cv_.waitUntil(lock, deadline) == std::cv_status::timeout) break;
  }
  --waiters_;
  if (shutdown_) return WaitResult::kShutdown;
  return generation_ != seen ? WaitResult::kChanged : WaitResult::kTimeout;
}

void ChangeNotifier::shutdown() {
  {
    MutexLock lock(mu_);
    shutdown_ = true;
  }
  cv_.notifyAll();
}

size_t ChangeNotifier::waiters() const {
  MutexLock lock(mu_);
  return waiters_;
}

}  // namespace perfhat::handler
