#include "native_thread.h"

namespace perfhat::detail {

NativeThread& NativeThread::operator=(NativeThread&& o) noexcept {
  if (this != &o) {
    if (running_) ::pthread_detach(thread_);
    thread_ = o.thread_;
    running_ = o.running_;
    o.running_ = false;
  }
  return *this;
}

NativeThread::~NativeThread() {
  if (running_) ::pthread_detach(thread_);
}

bool NativeThread::start(void* (*main)(void*), void* arg) {
  if (running_) return false;
  running_ = ::pthread_create(&thread_, nullptr, main, arg) == 0;
  return running_;
}

bool NativeThread::is_current() const {
  return running_ && ::pthread_equal(thread_, ::pthread_self()) != 0;
}

void NativeThread::join() {
  if (!running_) return;
  ::pthread_join(thread_, nullptr);
  running_ = false;
}

}  // namespace perfhat::detail
