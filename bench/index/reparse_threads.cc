#include "bench/index/reparse_threads.h"

#include <sys/resource.h>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <mutex>
#include <thread>

#include "bench/index/middle_line_edit.h"
#include "bench/index/percentile.h"
#include "server/analysis/compile_db.h"
#include "server/analysis/translation_unit.h"
#include "server/index/indexer.h"
#include "server/server/large_stack_thread.h"
#include "server/server/thread_cpu.h"

namespace perfhat::bench {
namespace {

// Runs tasks one at a time on a thread of its own, the caller waiting for each.
class TaskThread {
 public:
  explicit TaskThread(size_t stack_bytes) {
    auto body = [this] { loop(); };
    if (stack_bytes)
      large_ = server::LargeStackThread(stack_bytes, body);
    else
      plain_ = std::thread(body);
  }
  ~TaskThread() {
    run({});
    if (plain_.joinable()) plain_.join();
  }
  void run(std::function<void()> task) {
    std::unique_lock lock(mu_);
    task_ = std::move(task);
    stop_ = !task_;
    pending_ = true;
    cv_.notify_all();
    cv_.wait(lock, [this] { return !pending_; });
  }

 private:
  void loop() {
    std::unique_lock lock(mu_);
    for (;;) {
      cv_.wait(lock, [this] { return pending_; });
      if (stop_) {
        pending_ = false;
        cv_.notify_all();
        return;
      }
      task_();
      pending_ = false;
      cv_.notify_all();
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::function<void()> task_;
  bool pending_ = false, stop_ = false;
  server::LargeStackThread large_;
  std::thread plain_;
};

}  // namespace

int runReparseThreads(const std::string& db, const std::string& file, int n) {
  setenv("LIBCLANG_NOTHREADS", "1", 1);  // libclang on the calling thread
  const auto edit = middleLineEdit(file);
  if (!edit) return 1;
  const std::string& original = edit->original;
  const std::string& with = edit->edited;
  auto cc = analysis::compileCommandFor(file, db, {});

  struct Variant {
    const char* name;
    std::unique_ptr<TaskThread> thread;  // null: the main thread
    std::unique_ptr<analysis::TranslationUnit> tu;
    std::vector<double> cpu;
  };
  Variant variants[3] = {{"main thread", nullptr, nullptr, {}},
                         {"large-stack thread (the server's worker)",
                          std::make_unique<TaskThread>(server::analysisStackBytes()),
                          nullptr,
                          {}},
                         {"thread, default stack", std::make_unique<TaskThread>(0), nullptr, {}}};
  auto on = [](Variant& v, const std::function<void()>& f) {
    if (v.thread)
      v.thread->run(f);
    else
      f();
  };
  for (auto& v : variants)
    on(v, [&] { v.tu = analysis::TranslationUnit::parse(file, original, cc.args).value; });
  for (int i = 1; i <= n; ++i) {
    // A different order each round, so that no variant always follows the same one.
    for (int k = 0; k < 3; ++k) {
      Variant& v = variants[(i + k) % 3];
      on(v, [&] {
        const double c0 = server::threadCpuMs();
        v.tu->reparse(i % 2 ? with : original);
        v.cpu.push_back(server::threadCpuMs() - c0);
      });
    }
  }
  for (auto& v : variants) {
    std::printf("  reparse CPU, %-42s p50 %8.2f ms  p95 %8.2f ms  (n=%zu) ÷ main p50 %.3f\n",
                v.name, pct(v.cpu, 0.5), pct(v.cpu, 0.95), v.cpu.size(),
                pct(v.cpu, 0.5) / pct(variants[0].cpu, 0.5));
  }
  for (auto& v : variants) on(v, [&] { v.tu.reset(); });
  return 0;
}

}  // namespace perfhat::bench
