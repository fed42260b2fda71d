// What starting libperfhat costs when probes are off: nothing but the switch. A program started
// with PERFHAT_ENABLED=0 (googletest's test programs, issue #18) has no background thread and
// no clock calibration; turning probes on later starts what they need.
#include <dirent.h>
#include <gtest/gtest.h>
#include <malloc.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>

#include "budget_controller.h"
#include "perfhat/memory_exporter.hpp"
#include "perfhat/perfhat.hpp"

namespace {

perfhat::detail::Site g_site{nullptr, "int startns::work(int)", __FILE__, __LINE__,
                             perfhat::detail::kFunction};

[[gnu::noinline]] int work(int x) {
  perfhat::detail::Probe p(g_site);
  return x + 1;
}

// Threads of this process (the background thread names itself only once it runs, so it is
// counted, not looked up by name). A sanitizer's runtime starts a thread of its own at the
// process's first thread creation: one thread started and joined first leaves it out of the count.
int threads() {
  static const bool runtime_threads_started = [] {
    std::thread([] {}).join();
    return true;
  }();
  (void)runtime_threads_started;
  int n = 0;
  DIR* d = ::opendir("/proc/self/task");
  if (d == nullptr) return -1;
  while (dirent* e = ::readdir(d))
    if (e->d_name[0] != '.') ++n;
  ::closedir(d);
  return n;
}

TEST(InstrEngineStart, OffStartsNoThreadAndTurningOnLaterRecords) {
  perfhat::Config cfg;
  cfg.enabled = false;
  cfg.sampler = "full";
  cfg.cycle_s = 1e9;
  cfg.export_interval_s = 1e9;
  auto ex = std::make_shared<perfhat::MemoryExporter>();
  const int before = threads();
  ASSERT_TRUE(perfhat::init(cfg, ex)) << perfhat::last_error();
  EXPECT_EQ(threads(), before);
  EXPECT_EQ(work(1), 2);

  perfhat::set_enabled(true);
  EXPECT_EQ(threads(), before + 1);
  for (int i = 0; i < 3; ++i) work(i);
  perfhat::flush();
  EXPECT_EQ(ex->calls_of("startns::work"), 3u);  // the call made while off is not counted

  perfhat::shutdown();
  EXPECT_EQ(threads(), before);
  perfhat::set_enabled(true);  // after shutdown: the switch only, nothing started
  EXPECT_EQ(threads(), before);
  perfhat::set_enabled(false);
}

TEST(InstrEngineStart, OnStartsTheBackgroundThreadAtOnce) {
  perfhat::Config cfg;
  cfg.sampler = "full";
  cfg.cycle_s = 1e9;
  cfg.export_interval_s = 1e9;
  const int before = threads();
  ASSERT_TRUE(perfhat::init(cfg, std::make_shared<perfhat::MemoryExporter>()));
  EXPECT_EQ(threads(), before + 1);
  perfhat::shutdown();
  EXPECT_EQ(threads(), before);
}

// A process that asks for no collection budget never makes the budget's controller (its state
// and configuration at every start, and its stop at exit). Checked when no earlier test in this
// process made it (ctest runs each test in a process of its own).
TEST(InstrEngineStart, NoBudgetAskedForMakesNoBudgetController) {
  ::unsetenv("PERFHAT_BUDGET");
  const bool made_before = perfhat::budget::Controller::if_created() != nullptr;
  perfhat::Config cfg;
  cfg.sampler = "full";
  ASSERT_TRUE(perfhat::init(cfg, std::make_shared<perfhat::MemoryExporter>()));
  work(1);
  perfhat::shutdown();
  if (!made_before) {
    EXPECT_EQ(perfhat::budget::Controller::if_created(), nullptr);
  }
  // Asked for: made and configured on.
  ::setenv("PERFHAT_BUDGET", "0.05", 1);
  ASSERT_TRUE(perfhat::init(cfg, std::make_shared<perfhat::MemoryExporter>()));
  ASSERT_NE(perfhat::budget::Controller::if_created(), nullptr);
  EXPECT_TRUE(perfhat::budget::Controller::if_created()->enabled());
  perfhat::shutdown();
  ::unsetenv("PERFHAT_BUDGET");
  // A later start without one configures it off.
  ASSERT_TRUE(perfhat::init(cfg, std::make_shared<perfhat::MemoryExporter>()));
  EXPECT_FALSE(perfhat::budget::Controller::if_created()->enabled());
  perfhat::shutdown();
}

// Heaps glibc's allocator has made (malloc_info: one per arena past the main one).
int malloc_heaps() {
  char* text = nullptr;
  size_t size = 0;
  FILE* f = ::open_memstream(&text, &size);
  if (f == nullptr) return -1;
  ::malloc_info(0, f);
  std::fclose(f);
  int n = 0;
  for (const char* p = text; (p = std::strstr(p, "<heap nr=")) != nullptr; ++p) ++n;
  std::free(text);
  return n;
}

// The background thread of a short process (idle from its start to its stop) leaves the
// allocator no arena of its own: it was started without a heap object to free at its exit
// (native_thread.h; with std::thread that free made one, at every process's exit).
TEST(InstrEngineStart, AnIdleBackgroundThreadMakesNoMallocArena) {
  perfhat::Config cfg;
  cfg.sampler = "full";
  cfg.cycle_s = 1e9;
  cfg.export_interval_s = 1e9;
  // Not threads(): its first call starts and joins a thread, whose exit makes an arena that the
  // background thread would then reuse. ctest runs this test in a process of its own, where no
  // thread ran before.
  cfg.endpoint.clear();  // nothing to export: its final flush allocates nothing either
  const int heaps_before = malloc_heaps();
  ASSERT_TRUE(perfhat::init(cfg));
  perfhat::shutdown();  // the thread is joined
  EXPECT_EQ(malloc_heaps(), heaps_before);
}

}  // namespace
