// The HTTP server's connection workers: a task queue whose threads grow on demand, so that a
// connection never waits for another one to finish (cpp-httplib serves one connection per task,
// keep-alive included: with a fixed pool, eight busy exporters locked every reader out).
//
// `min_threads` are started at once and kept; more are started when a task arrives and no
// thread is idle, up to `max_threads` (beyond that tasks wait in the queue); a thread above the
// minimum that stays idle for `idle_timeout` exits. The number of connections is bounded by the
// server's admission (connection caps), not here.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include <httplib.h>

namespace perfhat::handler {

struct ElasticTaskQueueOptions {
  size_t min_threads = 8;
  size_t max_threads = 1024;
  std::chrono::milliseconds idle_timeout{30000};
};

class ElasticTaskQueue : public httplib::TaskQueue {
 public:
  explicit ElasticTaskQueue(ElasticTaskQueueOptions options);
  ~ElasticTaskQueue() override;
  ElasticTaskQueue(const ElasticTaskQueue&) = delete;
  ElasticTaskQueue& operator=(const ElasticTaskQueue&) = delete;

  void enqueue(std::function<void()> fn) override;
  // Runs the queued tasks, then joins every thread.
  void shutdown() override;

  size_t threads() const;  // live worker threads
  size_t idle() const;     // of which waiting for a task

 private:
  void spawnLocked();  // mu_ held
  void work();
  void joinFinishedLocked(std::vector<std::thread>& out);  // mu_ held

  const ElasticTaskQueueOptions options_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;                 // guarded by mu_
  std::unordered_map<std::thread::id, std::thread> live_;  // guarded by mu_
  std::vector<std::thread::id> finished_;                  // guarded by mu_: exited, not joined
  size_t idle_ = 0;                                        // guarded by mu_
  bool shutdown_ = false;                                  // guarded by mu_
};

}  // namespace perfhat::handler
