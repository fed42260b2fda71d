// A thread started with pthread_create and no state on the heap. std::thread hands its new
// thread a heap object to free, and that first free makes glibc give the thread a malloc arena
// of its own (a 64 MB reservation, its page faults, its unmapping at exit): the engine's
// background thread paid it in every process, although in a short one it allocates nothing.
#pragma once

#include <pthread.h>

namespace perfhat::detail {

class NativeThread {
 public:
  NativeThread() = default;
  NativeThread(NativeThread&& o) noexcept : thread_(o.thread_), running_(o.running_) {
    o.running_ = false;
  }
  NativeThread& operator=(NativeThread&& o) noexcept;
  NativeThread(const NativeThread&) = delete;
  NativeThread& operator=(const NativeThread&) = delete;
  // A thread still joinable here is detached (std::thread would terminate the process).
  ~NativeThread();

  // Runs main(arg) on a new thread; false (and nothing runs) if none could be created.
  bool start(void* (*main)(void*), void* arg);
  bool joinable() const { return running_; }
  // Whether the calling thread is this one (it cannot join itself).
  bool is_current() const;
  void join();

 private:
  pthread_t thread_{};
  bool running_ = false;
};

}  // namespace perfhat::detail
