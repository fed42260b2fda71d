// libclang's parses on a thread of their own. glibc's malloc gives each thread its own arena, and
// a libclang AST (hundreds of MB for a large file) is freed and allocated again at every reparse:
// on the analysis worker, whose arena also holds what the analysis keeps between edits (the
// snapshot, the walk cache, the index's summaries), the new AST had to be fitted between those,
// and malloc's free-list work made the reparse ~7 % dearer than libclang's own reparse in a
// process that holds nothing else (bench/README.md, "Edit → fresh hints: the server's 15 %").
// Here the ASTs come from an arena of their own. Each call waits for its task: the analyzer
// still runs one thing at a time.
#pragma once

#include <cstddef>
#include <exception>
#include <functional>
#include <string>

#include "common/thread_annotations.h"
#include "server/server/large_stack_thread.h"

namespace perfhat::server {

class ParseThread {
 public:
  // `stack_bytes`: the parse thread's stack (0: analysisStackBytes()).
  explicit ParseThread(size_t stack_bytes = 0);
  ~ParseThread();  // ends and joins the thread
  ParseThread(const ParseThread&) = delete;
  ParseThread& operator=(const ParseThread&) = delete;

  // Runs `task` on the parse thread (started at the first call, on the analysis stack, named
  // "perfhat-parse") and returns when it has finished, with the CPU time it took there (ms).
  // An exception thrown by `task` is rethrown here.
  // When the thread cannot be created (its stack cannot be reserved: `ulimit -v`, a low
  // RLIMIT_AS), this and every later task run on the calling thread instead, as they did before
  // the parse thread existed (the analysis worker has the same large stack), and 0 is returned:
  // their CPU time is the caller's own.
  double run(const std::function<void()>& task) EXCLUDES(mu_);
  // How many tasks have run on the parse thread.
  size_t runs() const EXCLUDES(mu_);
  // Why the tasks run on the calling thread, once: the first call after the thread could not be
  // created returns the reason, every other call "".
  std::string takeFallbackNote();

 private:
  void loop() EXCLUDES(mu_);

  mutable Mutex mu_;
  CondVar cv_;
  const std::function<void()>* task_ GUARDED_BY(mu_) = nullptr;
  std::exception_ptr error_ GUARDED_BY(mu_);
  double task_cpu_ms_ GUARDED_BY(mu_) = 0;
  bool done_ GUARDED_BY(mu_) = false;
  bool stopping_ GUARDED_BY(mu_) = false;
  size_t runs_ GUARDED_BY(mu_) = 0;
  // Only the one thread that calls run() touches these.
  const size_t stack_bytes_;
  bool fallback_ = false;      // the thread could not be created: tasks run on the caller
  std::string fallback_note_;  // why, until takeFallbackNote() takes it
  LargeStackThread thread_;    // started by the first run(), from the one thread that calls run()
};

}  // namespace perfhat::server
