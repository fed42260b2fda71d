#include "feedback-handler/http/change_notifier.h"

#include <unordered_map>

namespace perfhat::handler {
namespace {

struct Registry {
  std::mutex mu;
  std::unordered_map<const Store*, std::shared_ptr<ChangeNotifier>> by_store;
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: commits may run during static teardown
  return *r;
}

}  // namespace

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

std::shared_ptr<ChangeNotifier> ChangeNotifier::of(const Store& store) {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  auto& slot = r.by_store[&store];
  if (!slot) slot = std::make_shared<ChangeNotifier>();
  return slot;
}

void ChangeNotifier::committed(const Store& store) {
  std::shared_ptr<ChangeNotifier> n;
  {
    Registry& r = registry();
    std::lock_guard lock(r.mu);
    auto it = r.by_store.find(&store);
    if (it == r.by_store.end()) return;
    n = it->second;
  }
  n->notify();
}

void ChangeNotifier::forget(const Store& store) {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  r.by_store.erase(&store);
}

}  // namespace perfhat::handler
