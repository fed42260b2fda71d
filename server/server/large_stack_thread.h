// Threads with a large, configured stack for parsing and analysis.
//
// Legal but deep C++ (an else-if chain of 4,000 branches, 5,000 nested `if`s, a ternary chain,
// a sum of 35,000 calls: what generated dispatchers and lexers look like) makes clang's parser
// and Sema, libclang's cursor machinery and our own AST walk recurse once per level. libclang
// parses on a thread of its own with a fixed 8 MB stack and its crash recovery cannot catch a
// stack overflow (the signal handler needs the exhausted stack), so the whole server died.
// Instead, libclang is told to parse on the calling thread (LIBCLANG_NOTHREADS) and every thread
// that parses or analyses runs with this stack. Only the pages actually touched are committed.
#pragma once

#include <cstddef>
#include <functional>

#include <pthread.h>

namespace perfhat::server {

// 512 MiB: the four sources above need less than 64 MiB; the rest is headroom for files several
// times deeper. Overridden by PERFHAT_ANALYSIS_STACK_MB (clamped to [64, 8192]).
inline constexpr size_t kDefaultAnalysisStackMb = 512;
size_t analysisStackBytes();

// Makes libclang parse on the calling thread. Call from main() before any thread starts (it
// sets an environment variable); a value the user set explicitly is kept.
void parseOnCallingThread();

// A joinable thread running `fn` on a stack of `stack_bytes`. Throws std::system_error when the
// thread cannot be created.
class LargeStackThread {
 public:
  LargeStackThread() = default;
  LargeStackThread(size_t stack_bytes, std::function<void()> fn);
  ~LargeStackThread();  // joins
  LargeStackThread(const LargeStackThread&) = delete;
  LargeStackThread& operator=(const LargeStackThread&) = delete;
  LargeStackThread& operator=(LargeStackThread&& other) noexcept;

  bool joinable() const { return started_; }
  void join();

 private:
  pthread_t thread_{};
  bool started_ = false;
};

// Runs `fn` on a fresh thread with a stack of `stack_bytes` and waits for it; exceptions are
// rethrown in the caller.
void runWithStack(size_t stack_bytes, const std::function<void()>& fn);

}  // namespace perfhat::server
