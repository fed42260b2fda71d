#include "feedback-handler/http/elastic_task_queue.h"

#include <algorithm>

namespace perfhat::handler {

ElasticTaskQueue::ElasticTaskQueue(ElasticTaskQueueOptions options)
    : options_([&] {
        options.max_threads = std::max<size_t>(1, options.max_threads);
        options.min_threads = std::min(options.min_threads, options.max_threads);
        return options;
      }()) {
  MutexLock lock(mu_);
  for (size_t i = 0; i < options_.min_threads; ++i) spawnLocked();
}

ElasticTaskQueue::~ElasticTaskQueue() { shutdown(); }

void ElasticTaskQueue::spawnLocked() {
  std::thread t([this] { work(); });
  const std::thread::id id = t.get_id();
  live_.emplace(id, std::move(t));
}

void ElasticTaskQueue::joinFinishedLocked(std::vector<std::thread>& out) {
  for (const std::thread::id& id : finished_) {
    auto it = live_.find(id);
    if (it == live_.end()) continue;
    out.push_back(std::move(it->second));
    live_.erase(it);
  }
  finished_.clear();
}

void ElasticTaskQueue::enqueue(std::function<void()> fn) {
  std::vector<std::thread> exited;
  {
    MutexLock lock(mu_);
    if (shutdown_) return;
    joinFinishedLocked(exited);
    jobs_.push_back(std::move(fn));
    // Queued tasks beyond the idle threads each get a new thread (up to the maximum).
    if (jobs_.size() > idle_ && live_.size() - finished_.size() < options_.max_threads) {
      spawnLocked();
    }
  }
  cv_.notifyOne();
  for (std::thread& t : exited) t.join();  // they have returned from work() already
}

void ElasticTaskQueue::work() {
  MutexLock lock(mu_);
  for (;;) {
    ++idle_;
    const auto deadline = std::chrono::steady_clock::now() + options_.idle_timeout;
    bool woken = true;
    while (jobs_.empty() && !shutdown_) {
      if (cv_.waitUntil(lock, deadline) == std::cv_status::timeout) {
        woken = !jobs_.empty() || shutdown_;
        break;
      }
    }
    --idle_;
    if (!woken) {
      // Idle for the whole timeout: threads above the minimum leave.
      if (live_.size() - finished_.size() > options_.min_threads) break;
      continue;
    }
    if (jobs_.empty()) break;  // shutting down with nothing left to run
    std::function<void()> fn = std::move(jobs_.front());
    jobs_.pop_front();
    lock.unlock();
    fn();
    fn = nullptr;  // release what the task captured outside the lock
    lock.lock();
  }
  if (!shutdown_) finished_.push_back(std::this_thread::get_id());
}

void ElasticTaskQueue::shutdown() {
  std::unordered_map<std::thread::id, std::thread> all;
  {
    MutexLock lock(mu_);
    if (shutdown_ && live_.empty()) return;
    shutdown_ = true;
    all.swap(live_);
    finished_.clear();
  }
  cv_.notifyAll();
  for (auto& [id, t] : all) t.join();
}

size_t ElasticTaskQueue::threads() const {
  MutexLock lock(mu_);
  return live_.size() - finished_.size();
}

size_t ElasticTaskQueue::idle() const {
  MutexLock lock(mu_);
  return idle_;
}

}  // namespace perfhat::handler
