#include "server/server/parse_thread.h"

#include <pthread.h>

#include <system_error>
#include <utility>

#include "server/server/thread_cpu.h"

namespace perfhat::server {

ParseThread::ParseThread(size_t stack_bytes)
    : stack_bytes_(stack_bytes ? stack_bytes : analysisStackBytes()) {}

ParseThread::~ParseThread() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
  }
  cv_.notifyAll();
  thread_.join();
}

double ParseThread::run(const std::function<void()>& task) {
  if (!thread_.joinable() && !fallback_) {
    try {
      thread_ = LargeStackThread(stack_bytes_, [this] {
        pthread_setname_np(pthread_self(), "perfhat-parse");
        loop();
      });
    } catch (const std::system_error& e) {
      fallback_ = true;  // not retried: each attempt would reserve the whole stack again
      fallback_note_ = std::string("libclang parses on the analysis thread: ") + e.what();
    }
  }
  if (fallback_) {
    task();
    return 0;
  }
  MutexLock lock(mu_);
  task_ = &task;
  done_ = false;
  cv_.notifyAll();
  while (!done_) cv_.wait(lock);
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
  return task_cpu_ms_;
}

size_t ParseThread::runs() const {
  MutexLock lock(mu_);
  return runs_;
}

std::string ParseThread::takeFallbackNote() { return std::exchange(fallback_note_, {}); }

void ParseThread::loop() {
  MutexLock lock(mu_);
  for (;;) {
    while (!task_ && !stopping_) cv_.wait(lock);
    if (!task_) return;  // stopping, nothing asked
    const std::function<void()>* task = task_;
    task_ = nullptr;
    lock.unlock();
    std::exception_ptr error;
    const double cpu0 = threadCpuMs();
    try {
      (*task)();
    } catch (...) {
      error = std::current_exception();
    }
    const double cpu = threadCpuMs() - cpu0;
    lock.lock();
    error_ = error;
    task_cpu_ms_ = cpu;
    ++runs_;
    done_ = true;
    cv_.notifyAll();
  }
}

}  // namespace perfhat::server
