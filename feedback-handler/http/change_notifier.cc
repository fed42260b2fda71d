#include "feedback-handler/http/change_notifier.h"

namespace perfhat::handler {
void ChangeNotifier::notify() {
  {
    std::lock_guard lock(mu_);
    ++generation_;
  }
  cv_.notify_all();
}

uint64_t ChangeNotifier::generation() const {
  std::lock_guard lock(mu_);
  return generation_;
}

ChangeNotifier::WaitResult ChangeNotifier::wait(uint64_t seen, std::chrono::milliseconds timeout,
                                                size_t max_waiters) {
  std::unique_lock lock(mu_);
  if (shutdown_) return WaitResult::kShutdown;
  if (generation_ != seen) return WaitResult::kChanged;
  if (waiters_ >= max_waiters) return WaitResult::kTooManyWaiters;
  ++waiters_;
  cv_.wait_for(lock, timeout, [&] { return shutdown_ || generation_ != seen; });
  --waiters_;
  if (shutdown_) return WaitResult::kShutdown;
  return generation_ != seen ? WaitResult::kChanged : WaitResult::kTimeout;
}

void ChangeNotifier::shutdown() {
  {
    std::lock_guard lock(mu_);
    shutdown_ = true;
  }
  cv_.notify_all();
}

size_t ChangeNotifier::waiters() const {
  std::lock_guard lock(mu_);
  return waiters_;
}

}  // namespace perfhat::handler
