#include "common/stop_signals.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <condition_variable>
#include <mutex>

namespace perfhat {
namespace {

// Each case blocks the stop signals as a binary's main does and restores the test's mask after,
// once it has checked that no stop signal is left pending.
class StopSignals : public ::testing::Test {
 protected:
  void SetUp() override {
    pthread_sigmask(SIG_SETMASK, nullptr, &old_mask_);
    blockStopSignals();
  }
  void TearDown() override {
    sigset_t pending;
    sigpending(&pending);
    EXPECT_EQ(sigismember(&pending, SIGINT), 0);
    EXPECT_EQ(sigismember(&pending, SIGTERM), 0);
    pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
  }

 private:
  sigset_t old_mask_;
};

// A server stand-in that, like cpp-httplib's, ignores stop() until it is serving.
struct Served {
  std::mutex mutex;
  std::condition_variable changed;
  bool serving = false, stopped = false;
  int stop_calls = 0;

  // Serves at once, or only after a first stop() has come (and been lost) before serving.
  void serve(bool after_a_lost_stop) {
    std::unique_lock<std::mutex> lock(mutex);
    if (after_a_lost_stop) changed.wait(lock, [this] { return stop_calls > 0; });
    serving = true;
    changed.wait(lock, [this] { return stopped; });
  }
  void stop() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      ++stop_calls;
      if (serving) stopped = true;
    }
    changed.notify_all();
  }
};

TEST_F(StopSignals, ASignalToTheProcessStopsServing) {
  for (const int signal_number : {SIGINT, SIGTERM}) {
    Served served;
    runUntilStopSignal(
        [&] {
          kill(getpid(), signal_number);  // blocked everywhere: only the waiter can take it
          served.serve(false);
        },
        [&] { served.stop(); });
    EXPECT_TRUE(served.stopped) << signal_number;
  }
}

TEST_F(StopSignals, AStopLostBeforeServingIsRepeated) {
  Served served;
  runUntilStopSignal(
      [&] {
        kill(getpid(), SIGTERM);
        served.serve(true);
      },
      [&] { served.stop(); });
  EXPECT_TRUE(served.stopped);
  EXPECT_GE(served.stop_calls, 2);
}

TEST_F(StopSignals, ServingThatEndsOnItsOwnReturnsWithoutStop) {
  int serve_calls = 0, stop_calls = 0;
  runUntilStopSignal([&] { ++serve_calls; }, [&] { ++stop_calls; });
  EXPECT_EQ(serve_calls, 1);
  EXPECT_EQ(stop_calls, 0);
}

}  // namespace
}  // namespace perfhat
