// Phase-1 timing: every call is counted but only 1 in Config::timing_period calls is timed. On a
// deterministic injected clock (advanced only by the code under test) the exported estimate of
// the total/mean execution time must match the true values: exactly when every call is timed,
// within a few standard errors when sampled, and without aliasing on periodic call patterns.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <set>
#include <string>

#include "engine.h"
#include "perfhat/memory_exporter.hpp"
#include "perfhat/perfhat.hpp"

namespace {

// The clock only moves when a probed function "spends" time: durations are exactly known.
// Atomic: the engine's background thread (calibration, drain) reads it while a test advances it.
std::atomic<uint64_t> g_manual_ns{1'000'000'000};
uint64_t manual_clock() { return g_manual_ns.load(std::memory_order_relaxed); }

}  // namespace

namespace timingns {
[[gnu::noinline]] void spend(uint64_t ns) {
  PERFHAT_FUNCTION();
  g_manual_ns += ns;
}
[[gnu::noinline]] void spend_exact(uint64_t ns) {
  PERFHAT_FUNCTION();
  g_manual_ns += ns;
}
[[gnu::noinline]] void alternating(uint64_t ns) {
  PERFHAT_FUNCTION();
  g_manual_ns += ns;
}
// Skewed like TigrisFilterSelectsMostFrequent's frequencies, so the quantile grouping applies.
template <int N>
[[gnu::noinline]] void costs() {
  PERFHAT_FUNCTION();
  constexpr uint64_t kNs[] = {1000, 2000, 4000, 8000, 16000, 300000};
  g_manual_ns += kNs[N];
}
// Called at a fixed interval (set by the test, outside the probe): Inter-Arrival Time.
template <int N>
[[gnu::noinline]] void arrives() {
  PERFHAT_FUNCTION();
}
}  // namespace timingns

namespace {

uint64_t (*g_previous_clock)() = nullptr;

class InstrTiming : public ::testing::Test {
 protected:
  void SetUp() override {
    g_previous_clock = perfhat::detail::g_tick_source.load();
    perfhat::detail::set_tick_source(&manual_clock);  // before init: ticks are nanoseconds
  }
  void TearDown() override {
    perfhat::shutdown();
    perfhat::detail::set_tick_source(g_previous_clock);
  }
  std::shared_ptr<perfhat::MemoryExporter> start(uint32_t period, const std::string& filter = "",
                                                 const std::string& sampler = "none") {
    perfhat::Config c;
    c.sampler = sampler;  // "none": phase 1 only, no span ever reads the clock
    c.timing_period = period;
    c.filter = filter;
    c.service_name = "timing-test";
    auto ex = std::make_shared<perfhat::MemoryExporter>();
    EXPECT_TRUE(perfhat::init(c, ex)) << perfhat::last_error();
    return ex;
  }
};

struct TimingTotals {
  uint64_t count = 0, timed = 0;
  double sum_ns = 0;
};
TimingTotals totals(const perfhat::MemoryExporter& ex, const std::string& needle) {
  TimingTotals t;
  for (const auto& a : ex.aggregates()) {
    if (a.function.find(needle) == std::string::npos) continue;
    t.count += a.count;
    t.timed += a.timed_count;
    t.sum_ns += a.sum_ns;
  }
  return t;
}

TEST_F(InstrTiming, PeriodOneTimesEveryCallExactly) {
  auto ex = start(1);
  uint64_t truth = 0;
  for (uint64_t i = 0; i < 1000; ++i) {
    uint64_t d = 100 + (i * 37) % 1000;
    truth += d;
    timingns::spend_exact(d);
  }
  perfhat::flush();
  TimingTotals t = totals(*ex, "spend_exact");
  EXPECT_EQ(t.count, 1000u);
  EXPECT_EQ(t.timed, 1000u);
  EXPECT_DOUBLE_EQ(t.sum_ns, static_cast<double>(truth));
}

TEST_F(InstrTiming, SampledTimingEstimatesTheMean) {
  auto ex = start(16);
  const uint64_t n = 32000;
  double truth = 0;
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t d = 100 + (i * 37) % 1000;  // 100..1099 ns, mean ~600, sd ~290
    truth += static_cast<double>(d);
    timingns::spend(d);
  }
  perfhat::flush();
  TimingTotals t = totals(*ex, "timingns::spend(");
  EXPECT_EQ(t.count, n);  // every call is counted
  // About 1 in 16 calls timed (expected 2000, sd ~45).
  EXPECT_GT(t.timed, 1700u);
  EXPECT_LT(t.timed, 2300u);
  // Mean estimate within 5% (the standard error is ~1.1%).
  double mean = t.sum_ns / static_cast<double>(t.count);
  EXPECT_NEAR(mean, truth / n, 0.05 * truth / n);
}

TEST_F(InstrTiming, RandomizedCountdownDoesNotAliasWithPeriodicCalls) {
  // Even calls cost 100 ns, odd calls 1900 ns: a fixed 1-in-16 countdown would only ever time
  // one parity and report 100 or 1900.
  auto ex = start(16);
  for (int i = 0; i < 32000; ++i) timingns::alternating(i % 2 == 0 ? 100 : 1900);
  perfhat::flush();
  TimingTotals t = totals(*ex, "alternating");
  double mean = t.sum_ns / static_cast<double>(t.count);
  EXPECT_NEAR(mean, 1000.0, 100.0);  // standard error ~20
}

TEST_F(InstrTiming, TigrisMostExpensiveUsesSampledMeans) {
  // Nothing is relevant before the first analysis, so spans appear only after it.
  auto ex = start(16, "most expensive", "full");
  auto run = [] {
    for (int i = 0; i < 100; ++i) {
      timingns::costs<0>();
      timingns::costs<1>();
      timingns::costs<2>();
      timingns::costs<3>();
      timingns::costs<4>();
      timingns::costs<5>();
    }
  };
  run();
  perfhat::flush();
  EXPECT_TRUE(ex->spans().empty());
  perfhat::analyze_now();
  EXPECT_GE(perfhat::counters().relevant_functions, 1u);
  ex->clear();
  run();
  perfhat::flush();
  std::set<std::string> recorded;
  for (const auto& s : ex->spans()) recorded.insert(s.function);
  // Other tests' sites in this process take part in the grouping too, so check the ranking:
  // the most expensive is traced, the cheapest are not.
  auto traced = [&](int n) {
    for (const auto& f : recorded) {
      if (f.find("N = " + std::to_string(n) + "]") != std::string::npos) return true;
    }
    return false;
  };
  EXPECT_TRUE(traced(5));
  EXPECT_FALSE(traced(0));
  EXPECT_FALSE(traced(1));
  EXPECT_FALSE(traced(2));
}

TEST_F(InstrTiming, TigrisMostLatentUsesTheTimedWindow) {
  // Inter-Arrival Time comes from the window between the first and the last timed call and the
  // exact number of calls in it; the function called at the longest interval is "most latent".
  auto ex = start(16, "most latent", "full");
  auto run = [] {
    constexpr uint64_t kGap[] = {1000, 2000, 4000, 8000, 16000, 3000000};
    for (int i = 0; i < 200; ++i) {
      uint64_t t = g_manual_ns;
      g_manual_ns = t + kGap[0] * i;
      timingns::arrives<0>();
      g_manual_ns = t + kGap[1] * i;
      timingns::arrives<1>();
      g_manual_ns = t + kGap[2] * i;
      timingns::arrives<2>();
      g_manual_ns = t + kGap[3] * i;
      timingns::arrives<3>();
      g_manual_ns = t + kGap[4] * i;
      timingns::arrives<4>();
      g_manual_ns = t + kGap[5] * i;
      timingns::arrives<5>();
      g_manual_ns = t;
    }
  };
  uint64_t t0 = g_manual_ns;
  run();
  g_manual_ns = t0 + uint64_t{3000000} * 200;
  perfhat::analyze_now();
  EXPECT_GE(perfhat::counters().relevant_functions, 1u);
  ex->clear();
  run();
  perfhat::flush();
  std::set<std::string> recorded;
  for (const auto& s : ex->spans()) recorded.insert(s.function);
  auto traced = [&](int n) {
    for (const auto& f : recorded) {
      if (f.find("N = " + std::to_string(n) + "]") != std::string::npos) return true;
    }
    return false;
  };
  EXPECT_TRUE(traced(5));
  EXPECT_FALSE(traced(0));
  EXPECT_FALSE(traced(1));
}

TEST(InstrTimingConfig, TimingPeriodFromEnvironment) {
  setenv("PERFHAT_TIMING_PERIOD", "4", 1);
  EXPECT_EQ(perfhat::Config::from_env().timing_period, 4u);
  setenv("PERFHAT_TIMING_PERIOD", "0", 1);  // invalid: default kept
  EXPECT_EQ(perfhat::Config::from_env().timing_period, perfhat::Config{}.timing_period);
  setenv("PERFHAT_TIMING_PERIOD", "2.5", 1);
  EXPECT_EQ(perfhat::Config::from_env().timing_period, perfhat::Config{}.timing_period);
  unsetenv("PERFHAT_TIMING_PERIOD");
}

// Every whole-number setting takes an integer within its range and keeps its default otherwise.
TEST(InstrTimingConfig, WholeNumberSettingsFromEnvironment) {
  const perfhat::Config defaults;
  setenv("PERFHAT_EXPORT_BATCH", "512", 1);
  setenv("PERFHAT_SPAN_RING", "1048576", 1);
  setenv("PERFHAT_PHASE1_WINDOW_CALLS", "0", 1);
  setenv("PERFHAT_PHASE1_WINDOW_MS", "1000000000", 1);
  perfhat::Config c = perfhat::Config::from_env();
  EXPECT_EQ(c.batch_size, 512u);
  EXPECT_EQ(c.span_ring_per_thread, 1048576u);
  EXPECT_EQ(c.phase1_window_calls, 0u);
  EXPECT_EQ(c.phase1_window_ms, 1000000000u);
  setenv("PERFHAT_EXPORT_BATCH", "65537", 1);  // above its range
  setenv("PERFHAT_SPAN_RING", "0", 1);         // below
  setenv("PERFHAT_PHASE1_WINDOW_CALLS", "1.5", 1);
  setenv("PERFHAT_PHASE1_WINDOW_MS", "-1", 1);
  c = perfhat::Config::from_env();
  EXPECT_EQ(c.batch_size, defaults.batch_size);
  EXPECT_EQ(c.span_ring_per_thread, defaults.span_ring_per_thread);
  EXPECT_EQ(c.phase1_window_calls, defaults.phase1_window_calls);
  EXPECT_EQ(c.phase1_window_ms, defaults.phase1_window_ms);
  for (const char* name : {"PERFHAT_EXPORT_BATCH", "PERFHAT_SPAN_RING",
                           "PERFHAT_PHASE1_WINDOW_CALLS", "PERFHAT_PHASE1_WINDOW_MS"}) {
    unsetenv(name);
  }
}

// A whole number in [0, 1e9] (0: no function leaves a counting window early); others keep the
// default.
TEST(InstrTimingConfig, PhaseOneFunctionCallsFromEnvironment) {
  const uint32_t def = perfhat::Config{}.phase1_function_calls;
  for (const auto& [value, expected] : {std::pair<const char*, uint32_t>{"0", 0},
                                        {"64", 64},
                                        {"1000000000", 1000000000},
                                        {"1000000001", def},
                                        {"-1", def},
                                        {"2.5", def}}) {
    setenv("PERFHAT_PHASE1_FUNCTION_CALLS", value, 1);
    EXPECT_EQ(perfhat::Config::from_env().phase1_function_calls, expected) << value;
  }
  unsetenv("PERFHAT_PHASE1_FUNCTION_CALLS");
}

}  // namespace
