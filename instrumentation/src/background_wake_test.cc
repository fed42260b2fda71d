#include "background_wake.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace perfhat::detail {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// Long enough that a wait ending on its time is not mistaken for a wake on a loaded machine.
constexpr seconds kLong{30};

// A wake asked for while the background thread is busy (no waiter for the notify) ends its next
// wait at once. With a plain condition variable this wait lasts its 30 s and returns false.
TEST(BackgroundWake, ARequestMadeWhileNobodyWaitsEndsTheNextWaitAtOnce) {
  Mutex m;
  BackgroundWake wake;
  wake.request();
  MutexLock l(m);
  EXPECT_TRUE(wake.wait(l, kLong));
}

TEST(BackgroundWake, ARequestIsTakenByOneWait) {
  Mutex m;
  BackgroundWake wake;
  wake.request();
  wake.request();
  MutexLock l(m);
  EXPECT_TRUE(wake.wait(l, kLong));
  EXPECT_FALSE(wake.wait(l, milliseconds(1)));
}

// From another thread, before or during the wait: the waiter is woken either way.
TEST(BackgroundWake, ARequestFromAnotherThreadEndsTheWait) {
  Mutex m;
  BackgroundWake wake;
  std::thread other([&] { wake.request(); });
  {
    MutexLock l(m);
    EXPECT_TRUE(wake.wait(l, kLong));
  }
  other.join();
}

TEST(BackgroundWake, AWaitWithoutARequestEndsOnItsTime) {
  Mutex m;
  BackgroundWake wake;
  MutexLock l(m);
  EXPECT_FALSE(wake.wait(l, milliseconds(1)));
}

}  // namespace
}  // namespace perfhat::detail
