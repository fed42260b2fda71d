// Tigris' phase 2 (grouping, then classification into the relevant set) runs every
// analysisFixedDelay seconds: a fixed period, adjustable at run time, 120 s in the thesis'
// evaluation (PERFHAT_CYCLE_S, perfhat::set_analysis_cycle). The thesis has no other trigger (an
// adaptive one is listed as future work), so a process that lives less than the delay stays in
// phase 1; one that sets a delay shorter than its life leaves it on its own, without
// analyze_now(). docs/auto-instrumentation.md, "Tigris in short processes". A binary of its own:
// the grouping ranks every site of the process, so other tests' sites would change the outcome.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "perfhat/memory_exporter.hpp"
#include "perfhat/perfhat.hpp"

namespace {

perfhat::detail::Site g_frequent{nullptr, "void cyclens::frequent()", __FILE__, __LINE__,
                                 perfhat::detail::kFunction};
perfhat::detail::Site g_rare{nullptr, "void cyclens::rare()", __FILE__, __LINE__,
                             perfhat::detail::kFunction};

[[gnu::noinline]] void frequent() { perfhat::detail::Probe p(g_frequent); }
[[gnu::noinline]] void rare() { perfhat::detail::Probe p(g_rare); }

// "more frequent" over two functions called 1,000 and 10 times selects the frequent one (the
// quantile grouping puts it at or above Q3): exact counts, so the outcome does not depend on
// timing.
perfhat::Config config(double cycle_s) {
  perfhat::Config cfg;
  cfg.sampler = "full";
  cfg.filter = "more frequent";
  cfg.cycle_s = cycle_s;
  cfg.export_interval_s = 1e9;
  cfg.endpoint.clear();
  return cfg;
}

void phase1_calls() {
  for (int i = 0; i < 10; ++i) rare();
  for (int i = 0; i < 1000; ++i) frequent();
}

// Polls until the background thread's own cycles (after `cycles_before`) have selected a function
// (at most 60 s: far longer than a 50 ms period, even on a loaded machine). Keeps calling
// meanwhile, the frequent function ten times more often, so the selection converges whatever the
// first cycle saw.
bool wait_for_selection(uint64_t cycles_before) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (;;) {
    const perfhat::Counters c = perfhat::counters();
    if (c.analysis_cycles > cycles_before && c.relevant_functions > 0) return true;
    if (std::chrono::steady_clock::now() > deadline) return false;
    rare();
    for (int i = 0; i < 10; ++i) frequent();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

size_t spans_of(const perfhat::MemoryExporter& ex, const std::string& function) {
  size_t n = 0;
  for (const auto& s : ex.spans())
    if (s.function == function) ++n;
  return n;
}

TEST(InstrAnalysisCycle, AShortConfiguredDelayLeavesPhaseOneWithoutBeingAsked) {
  auto ex = std::make_shared<perfhat::MemoryExporter>();
  const uint64_t cycles_before = perfhat::counters().analysis_cycles;
  ASSERT_TRUE(perfhat::init(config(0.05), ex)) << perfhat::last_error();
  phase1_calls();
  ASSERT_TRUE(wait_for_selection(cycles_before)) << "no analysis cycle selected anything in 60 s";
  EXPECT_EQ(perfhat::counters().relevant_functions, 1u);

  // Phase 2: the selected function is traced, the other one only counted.
  perfhat::flush();
  ex->clear();
  for (int i = 0; i < 100; ++i) {
    frequent();
    rare();
  }
  perfhat::flush();
  EXPECT_EQ(spans_of(*ex, "void cyclens::frequent()"), 100u);
  EXPECT_EQ(spans_of(*ex, "void cyclens::rare()"), 0u);
  perfhat::shutdown();
}

TEST(InstrAnalysisCycle, TheDelayIsAdjustableAtRunTime) {
  auto ex = std::make_shared<perfhat::MemoryExporter>();
  const uint64_t cycles_before = perfhat::counters().analysis_cycles;
  ASSERT_TRUE(perfhat::init(config(1e9), ex)) << perfhat::last_error();
  phase1_calls();
  EXPECT_EQ(perfhat::counters().analysis_cycles, cycles_before);  // 1e9 s: still in phase 1
  EXPECT_EQ(perfhat::counters().relevant_functions, 0u);
  perfhat::set_analysis_cycle(0.05);
  ASSERT_TRUE(wait_for_selection(cycles_before)) << "the shortened delay ran no cycle in 60 s";
  perfhat::shutdown();
}

}  // namespace
