// ChangeNotifier: wake on commit, timeout, shutdown, the waiter bound, and the per-store registry.
// Waits are event-driven (a waiter thread and a future); timeouts are generous upper bounds, never
// asserted durations.
#include "feedback-handler/http/change_notifier.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <future>
#include <thread>

#include "feedback-handler/store/store.h"

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

TEST(ChangeNotifier, RegistryRoutesCommitsOfOneStoreToItsWaiters) {
  char dir[] = "/tmp/perfhat-notifier-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  StoreOptions a_opts, b_opts;
  a_opts.path = std::string(dir) + "/a.sqlite";
  b_opts.path = std::string(dir) + "/b.sqlite";
  Store a(a_opts), b(b_opts);
  std::shared_ptr<ChangeNotifier> na = ChangeNotifier::of(a);
  EXPECT_EQ(ChangeNotifier::of(a), na);
  std::shared_ptr<ChangeNotifier> nb = ChangeNotifier::of(b);
  uint64_t a0 = na->generation(), b0 = nb->generation();
  ChangeNotifier::committed(b);
  EXPECT_EQ(na->generation(), a0);
  EXPECT_EQ(nb->generation(), b0 + 1);
  ChangeNotifier::forget(a);
  ChangeNotifier::forget(b);
  EXPECT_NE(ChangeNotifier::of(a), na);  // a fresh notifier after forget (address reuse)
  ChangeNotifier::forget(a);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace perfhat::handler
