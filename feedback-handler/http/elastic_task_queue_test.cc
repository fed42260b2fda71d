#include "feedback-handler/http/elastic_task_queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <thread>

namespace perfhat::handler {
namespace {

using namespace std::chrono_literals;

// Every task gets a thread while the others block (a fixed pool of 2 would deadlock here), and
// threads above the minimum leave once idle.
TEST(ElasticTaskQueue, GrowsPerBlockedTaskAndReapsIdleThreads) {
  ElasticTaskQueue q({.min_threads = 2, .max_threads = 64, .idle_timeout = 50ms});
  EXPECT_EQ(q.threads(), 2u);
  std::promise<void> release;
  std::shared_future<void> gate = release.get_future().share();
  std::atomic<int> started{0};
  for (int i = 0; i < 10; ++i) {
    q.enqueue([&, gate] {
      ++started;
      gate.wait();
    });
  }
  for (int i = 0; i < 1000 && started < 10; ++i) std::this_thread::sleep_for(5ms);
  EXPECT_EQ(started.load(), 10);
  EXPECT_GE(q.threads(), 10u);
  release.set_value();
  for (int i = 0; i < 1000 && q.threads() > 2; ++i) std::this_thread::sleep_for(5ms);
  EXPECT_EQ(q.threads(), 2u);
  std::atomic<int> ran{0};
  q.enqueue([&] { ++ran; });  // still serving after the reap (and joins the reaped threads)
  q.shutdown();
  EXPECT_EQ(ran.load(), 1);
}

TEST(ElasticTaskQueue, QueuesBeyondTheMaximumAndRunsEverythingBeforeShutdown) {
  ElasticTaskQueue q({.min_threads = 0, .max_threads = 3, .idle_timeout = 10s});
  std::atomic<int> ran{0};
  for (int i = 0; i < 50; ++i) {
    q.enqueue([&] {
      std::this_thread::sleep_for(1ms);
      ++ran;
    });
  }
  EXPECT_LE(q.threads(), 3u);
  q.shutdown();
  EXPECT_EQ(ran.load(), 50);
}

}  // namespace
}  // namespace perfhat::handler
