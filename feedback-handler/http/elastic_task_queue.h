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
#include <cstddef>
#include <deque>
#include <functional>
#include <thread>
#include <unordered_map>
#include <vector>

#include <httplib.h>

#include "common/thread_annotations.h"

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
  void spawnLocked() REQUIRES(mu_);
  void work() EXCLUDES(mu_);
  void joinFinishedLocked(std::vector<std::thread>& out) REQUIRES(mu_);

  const ElasticTaskQueueOptions options_;
  mutable Mutex mu_;
  CondVar cv_;
  std::deque<std::function<void()>> jobs_ GUARDED_BY(mu_);
  std::unordered_map<std::thread::id, std::thread> live_ GUARDED_BY(mu_);
  std::vector<std::thread::id> finished_ GUARDED_BY(mu_);  // exited, not joined
  size_t idle_ GUARDED_BY(mu_) = 0;
  bool shutdown_ GUARDED_BY(mu_) = false;
};

}  // namespace perfhat::handler
