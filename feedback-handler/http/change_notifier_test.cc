// ChangeNotifier: wake on commit, timeout, shutdown and the waiter bound. That the HTTP server's
// ingest and a local handler's sync both wake it is shown by the long-poll integration tests.
// Waits are event-driven (a waiter thread and a future); timeouts are generous upper bounds, never
// asserted durations.
#include "feedback-handler/http/change_notifier.h"

#include <gtest/gtest.h>

#include <future>
#include <thread>

namespace perfhat::handler {
namespace {

using namespace std::chrono_literals;
using R = ChangeNotifier::WaitResult;

// Blocks (bounded) until `n` has `count` parked waiters.
bool waitForWaiters(const ChangeNotifier& n, size_t count) {
  for (int i = 0; i < 20000 && n.waiters() != count; ++i) std::this_thread::sleep_for(1ms);
  return n.waiters() == count;
}

TEST(ChangeNotifier, NotifyWakesAParkedWaiter) {
  ChangeNotifier n;
  uint64_t seen = n.generation();
  auto waiter = std::async(std::launch::async, [&] { return n.wait(seen, 60s, 4); });
  ASSERT_TRUE(waitForWaiters(n, 1));
  n.notify();
  ASSERT_EQ(waiter.wait_for(30s), std::future_status::ready);
  EXPECT_EQ(waiter.get(), R::kChanged);
  EXPECT_EQ(n.generation(), seen + 1);
  EXPECT_EQ(n.waiters(), 0u);
}

TEST(ChangeNotifier, ACommitBeforeTheWaitIsNotLost) {
  ChangeNotifier n;
  uint64_t seen = n.generation();  // recorded before the (simulated) store read
  n.notify();                      // commit lands between the read and the wait
  EXPECT_EQ(n.wait(seen, 60s, 4), R::kChanged);
}

TEST(ChangeNotifier, TimesOutWithoutACommit) {
  ChangeNotifier n;
  EXPECT_EQ(n.wait(n.generation(), 20ms, 4), R::kTimeout);
  EXPECT_EQ(n.waiters(), 0u);
}

TEST(ChangeNotifier, ShutdownWakesEveryWaiterAndLaterWaitsReturnAtOnce) {
  ChangeNotifier n;
  uint64_t seen = n.generation();
  std::vector<std::future<R>> waiters;
  waiters.reserve(3);
  for (int i = 0; i < 3; ++i) {
    waiters.push_back(std::async(std::launch::async, [&] { return n.wait(seen, 60s, 8); }));
  }
  ASSERT_TRUE(waitForWaiters(n, 3));
  n.shutdown();
  for (auto& w : waiters) {
    ASSERT_EQ(w.wait_for(30s), std::future_status::ready);
    EXPECT_EQ(w.get(), R::kShutdown);
  }
  EXPECT_EQ(n.wait(seen, 60s, 8), R::kShutdown);
}

TEST(ChangeNotifier, RefusesToParkMoreThanTheBound) {
  ChangeNotifier n;
  uint64_t seen = n.generation();
  auto first = std::async(std::launch::async, [&] { return n.wait(seen, 60s, 1); });
  ASSERT_TRUE(waitForWaiters(n, 1));
  EXPECT_EQ(n.wait(seen, 60s, 1), R::kTooManyWaiters);
  n.notify();
  ASSERT_EQ(first.wait_for(30s), std::future_status::ready);
  EXPECT_EQ(first.get(), R::kChanged);
}

}  // namespace
}  // namespace perfhat::handler
