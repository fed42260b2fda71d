// The collection budget's charge for one window: every part the collector pays for is in it
// (each count alone moves exactly its part and the total), cold entries are counted once per
// site and request, and the cold calibration times the call alone after the eviction.
#include "budget_cost_account.h"

#include <gtest/gtest.h>

#include "budget_cold_calibration.h"

namespace perfhat::budget {
namespace {

// Detection 10 ns, report 1 µs, counted 40 ns, a stack sample 30 µs, a cold entry 90 ns extra.
constexpr Costs kAccountCosts{10e-9, 1e-6, 40e-9, 30e-6, 90e-9};
constexpr double kReportInProbe = 400e-9;
constexpr double kRequestInProbe = 700e-9;  // a request root's context, priced apart

TEST(BudgetCostAccount, EachCountMovesItsOwnPartAndTheTotal) {
  struct Case {
    const char* name;
    void (*set)(WindowCounts&);
    double CostParts::*part;
    double expected_s;
  };
  const Case cases[] = {
      {"detected", [](WindowCounts& w) { w.detected = 1000; }, &CostParts::detect_s, 1000 * 10e-9},
      {"recorded", [](WindowCounts& w) { w.recorded = 1000; }, &CostParts::report_s,
       1000 * kReportInProbe},
      {"counted", [](WindowCounts& w) { w.counted_unrecorded = 1000; }, &CostParts::counted_s,
       1000 * 30e-9},
      {"requests", [](WindowCounts& w) { w.request_roots_taken = 1000; }, &CostParts::requests_s,
       1000 * kRequestInProbe},
      {"cold", [](WindowCounts& w) { w.cold_entries = 1000; }, &CostParts::cold_s, 1000 * 90e-9},
      {"measuring", [](WindowCounts& w) { w.measuring_s = 2e-4; }, &CostParts::measuring_s, 2e-4},
      {"samples", [](WindowCounts& w) { w.sample_cpu_s = 3e-4; }, &CostParts::samples_s, 3e-4},
      // The collector thread's CPU: the tick, the export and its serialisation, the status.
      {"collector", [](WindowCounts& w) { w.collector_cpu_s = 5e-3; }, &CostParts::collector_s,
       5e-3},
  };
  const CostParts none = accountWindow({}, kAccountCosts, kReportInProbe, kRequestInProbe);
  EXPECT_DOUBLE_EQ(none.total_s(), 0);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    WindowCounts w;
    c.set(w);
    const CostParts p = accountWindow(w, kAccountCosts, kReportInProbe, kRequestInProbe);
    EXPECT_NEAR(p.*(c.part), c.expected_s, c.expected_s * 1e-12);
    EXPECT_NEAR(p.total_s(), c.expected_s, c.expected_s * 1e-12);
    const bool on_app_threads = c.part != &CostParts::collector_s;
    EXPECT_NEAR(p.probes_s(), on_app_threads ? c.expected_s : 0, c.expected_s * 1e-12);
  }
  // All at once: the parts add up.
  WindowCounts all;
  for (const Case& c : cases) c.set(all);
  double sum = 0;
  for (const Case& c : cases) sum += c.expected_s;
  EXPECT_NEAR(accountWindow(all, kAccountCosts, kReportInProbe, kRequestInProbe).total_s(), sum,
              sum * 1e-12);
}

TEST(BudgetCostAccount, ColdEntriesAreOnePerSiteAndRequestAtMost) {
  // 300 requests: a site called 5 times per request is cold 300 times, one called in a third of
  // them 100 times, a hot loop site (10,000 calls) 300 times.
  EXPECT_DOUBLE_EQ(coldEntries({1500, 100, 10000}, 300), 300 + 100 + 300);
  EXPECT_DOUBLE_EQ(coldEntries({1500, 100}, 0), 0);  // no request roots: loops, warm
  EXPECT_DOUBLE_EQ(coldEntries({}, 300), 0);
}

// A fake clock the calls advance: 3 ticks for reading it, 5 for a warm call, 25 for a call right
// after an eviction. What `prepare` touches does not count.
uint64_t g_now = 0;
bool g_evicted = false;
uint64_t fake_clock() { return g_now += 3; }

TEST(BudgetCostAccount, ColdCalibrationTimesTheCallAloneAfterTheEviction) {
  g_now = 0;
  int prepared = 0, finished = 0, calls = 0;
  auto prepare = [&] {
    ++prepared;
    g_now += 1000;  // set-up work: outside the timed interval
    g_evicted = false;
  };
  auto pair = [&] {
    ++calls;
    g_now += g_evicted ? 25 : 5;
    g_evicted = false;
  };
  auto finish = [&] {
    ++finished;
    g_now += 1000;
  };
  auto evict = [&] {
    g_now += 5000;
    g_evicted = true;
  };
  // Each interval is [read, read]: the empty one measures 3 ticks, the cold call 3 + 25.
  EXPECT_EQ(coldPairTicks(prepare, pair, finish, evict, &fake_clock, 11), 25u);
  EXPECT_EQ(calls, 12);  // one untimed first call, then one per trial
  EXPECT_EQ(prepared, 12);
  EXPECT_EQ(finished, 12);
  // Without an eviction the same call is warm: 5 ticks.
  EXPECT_EQ(coldPairTicks(
                prepare, pair, finish, [] {}, &fake_clock, 11),
            5u);
}

// Trials slowed by something else (preemption, another core's traffic) only ever take longer:
// up to half of them leave the figure alone.
TEST(BudgetCostAccount, ColdCalibrationLooksPastSlowedTrials) {
  g_now = 0;
  int trial = 0;
  auto pair = [&] { g_now += (trial++ % 2 == 0) ? 25 : 900; };
  EXPECT_EQ(coldPairTicks([] {}, pair, [] {}, [] {}, &fake_clock, 20), 25u);
}

}  // namespace
}  // namespace perfhat::budget
