#include "common/stop_signals.h"

#include <pthread.h>
#include <signal.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace perfhat {
namespace {

// How often stop() is called again after a stop signal until serve() has returned.
constexpr auto kStopRetry = std::chrono::milliseconds(50);

sigset_t stopSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

}  // namespace

void blockStopSignals() {
  const sigset_t set = stopSignals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

void runUntilStopSignal(const std::function<void()>& serve, const std::function<void()>& stop) {
  blockStopSignals();  // in this thread, so that the waiter starts with them blocked too
  std::mutex mutex;
  std::condition_variable served_changed;
  bool served = false;  // under `mutex`
  std::thread waiter([&] {
    const sigset_t set = stopSignals();
    int signal_number = 0;
    sigwait(&set, &signal_number);
    // A stop that comes before serve() has started is lost (cpp-httplib's Server::stop() does
    // nothing until listen_after_bind runs), so it is repeated until serve() has returned.
    std::unique_lock<std::mutex> lock(mutex);
    while (!served) {
      lock.unlock();
      stop();
      lock.lock();
      served_changed.wait_for(lock, kStopRetry, [&] { return served; });
    }
  });
  serve();
  {
    std::lock_guard<std::mutex> lock(mutex);
    served = true;
  }
  served_changed.notify_all();
  // Wake the waiter when serve() returned on its own. The signal goes to that thread alone,
  // where it is blocked: sigwait takes it or, when the waiter already took a real one, it is
  // dropped when the thread ends, so nothing stays pending for the rest of the process.
  pthread_kill(waiter.native_handle(), SIGTERM);
  waiter.join();
}

}  // namespace perfhat
