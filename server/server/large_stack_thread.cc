#include "server/server/large_stack_thread.h"

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>
#include <system_error>

namespace perfhat::server {
namespace {

void* trampoline(void* arg) {
  std::unique_ptr<std::function<void()>> fn(static_cast<std::function<void()>*>(arg));
  (*fn)();
  return nullptr;
}

}  // namespace

size_t analysisStackBytes() {
  size_t mb = kDefaultAnalysisStackMb;
  if (const char* v = std::getenv("PERFHAT_ANALYSIS_STACK_MB"); v && *v) {
    char* end = nullptr;
    unsigned long long n = std::strtoull(v, &end, 10);
    if (end && *end == '\0' && n > 0) mb = static_cast<size_t>(std::clamp(n, 64ULL, 8192ULL));
  }
  return mb << 20;
}

void parseOnCallingThread() { ::setenv("LIBCLANG_NOTHREADS", "1", /*overwrite=*/0); }

LargeStackThread::LargeStackThread(size_t stack_bytes, std::function<void()> fn) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  int rc = pthread_attr_setstacksize(&attr, stack_bytes);
  auto* arg = new std::function<void()>(std::move(fn));
  if (rc == 0) rc = pthread_create(&thread_, &attr, trampoline, arg);
  pthread_attr_destroy(&attr);
  if (rc != 0) {
    delete arg;
    throw std::system_error(
        rc, std::generic_category(),
        "cannot start a thread with a " + std::to_string(stack_bytes >> 20) + " MiB stack");
  }
  started_ = true;
}

LargeStackThread::~LargeStackThread() { join(); }

LargeStackThread& LargeStackThread::operator=(LargeStackThread&& other) noexcept {
  if (this != &other) {
    join();
    thread_ = other.thread_;
    started_ = other.started_;
    other.started_ = false;
  }
  return *this;
}

void LargeStackThread::join() {
  if (!started_) return;
  pthread_join(thread_, nullptr);
  started_ = false;
}

void runWithStack(size_t stack_bytes, const std::function<void()>& fn) {
  std::exception_ptr error;
  {
    LargeStackThread t(stack_bytes, [&] {
      try {
        fn();
      } catch (...) {
        error = std::current_exception();
      }
    });
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace perfhat::server
