// A re-arm window records a few calls of each untraced site it arms, weighted for the windows the
// site stood disarmed in (budget_rearm.h): an untraced class's weighted count then covers the
// calls of its disarmed windows, and its durations come from the steady state, not only from the
// start-up's windows (every call recorded before the first plan). Real probes and engine; the
// controller ticked by the test with injected clocks and calibration.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "budget_controller.h"
#include "budget_hand_ticked.h"
#include "budget_runtime.h"
#include "engine.h"
#include "perfhat/memory_exporter.hpp"
#include "perfhat/perfhat.hpp"

namespace perfhat::budget {
namespace {

detail::Site g_hot{nullptr, "void rearmrecords::hot::tick()", __FILE__, __LINE__,
                   detail::kFunction};
detail::Site g_cold{nullptr, "void rearmrecords::cold::step()", __FILE__, __LINE__,
                    detail::kFunction};

[[gnu::noinline]] void hot() { detail::Probe p(g_hot); }
[[gnu::noinline]] void cold() { detail::Probe p(g_cold); }

// A record costs 50 µs: at 1 % of a CPU-second a second the plan traces 200 events a second, so
// the cold site's 20 calls a window are traced and the hot one's 2,000 are left untraced.
Costs dearRecords(double, uint32_t) {
  Costs c;
  c.detect_s = 5e-9;
  c.report_s = 50e-6;
  return c;
}
double g_clock_s = 0;
double wall() { return g_clock_s += 1; }  // each tick ends a 1 s window...
double cpu() { return g_clock_s; }        // ... of one CPU-second
double collector() { return 0; }

// The engine on, every call recorded, nothing exported before shutdown(); nullptr if it failed.
std::shared_ptr<MemoryExporter> recordEveryCall() {
  Config config;
  config.sampler = "full";
  config.export_interval_s = 1e9;
  config.cycle_s = 1e9;
  auto exporter = std::make_shared<MemoryExporter>();
  return init(config, exporter) ? exporter : nullptr;
}

TEST(BudgetRearmRecords, AnUntracedSitesWeightsCoverTheWindowsItStoodDisarmedIn) {
  const std::shared_ptr<MemoryExporter> exporter = recordEveryCall();
  ASSERT_TRUE(exporter) << last_error();
  Settings s;
  s.enabled = true;
  s.planner.probing = true;
  s.planner.budget_share = 0.01;
  s.planner.windows = 4;
  s.classes = "hot=ns:rearmrecords::hot::*;cold=ns:rearmrecords::cold::*";
  Controller& c = Controller::get();
  uint64_t hot_calls = 0, cold_calls = 0;
  int rearms = 0;
  {
    const HandTicked hand(s, &dearRecords, {&wall, &cpu, &collector});
    ASSERT_TRUE(hand.configured()) << hand.error();
    hot();
    cold();  // registered and classified at the first tick
    hot_calls = cold_calls = 1;
    c.tick();  // calibrates; the first window starts
    // Until two re-arm windows have run (the first 10 windows after the first plan, the second
    // 10 after that), ending with one: every hot call is then in a window some record stands for.
    for (int window = 1; window <= 60 && rearms < 2; ++window) {
      const bool armed = g_hot.armed.load() != 0;
      for (int i = 0; i < 2000; ++i) hot();
      for (int i = 0; i < 20; ++i) cold();
      hot_calls += 2000;
      cold_calls += 20;
      c.tick();
      if (window > 3 && armed) ++rearms;
    }
  }
  shutdown();
  ASSERT_EQ(rearms, 2);
  double hot_weight = 0, hot_records = 0, cold_weight = 0;
  for (const auto& span : exporter->spans()) {
    if (span.function.find("rearmrecords::hot") != std::string::npos) {
      hot_weight += span.weight;
      ++hot_records;
    } else if (span.function.find("rearmrecords::cold") != std::string::npos) {
      cold_weight += span.weight;
    }
  }
  for (const auto& h : exporter->histograms()) {
    if (h.data.kind != HistogramData::kFunction) continue;
    if (h.site.function.find("rearmrecords::hot") != std::string::npos)
      hot_weight += h.data.count();
    else if (h.site.function.find("rearmrecords::cold") != std::string::npos)
      cold_weight += h.data.count();
  }
  SCOPED_TRACE(std::to_string(hot_records) + " hot records for " + std::to_string(hot_calls) +
               " calls");
  // Horvitz-Thompson over the windows: about 200 records a re-arm window at 0.1 (its calls and
  // those of the 9 windows before it), so the estimate's standard error is about 5 %. Without
  // the re-arm records only the start-up's windows are counted: under a fifth of the calls.
  EXPECT_NEAR(hot_weight / static_cast<double>(hot_calls), 1.0, 0.2);
  EXPECT_LT(hot_records, 0.5 * static_cast<double>(hot_calls));
  // The traced cold site: every call recorded, at weight 1.
  EXPECT_NEAR(cold_weight, static_cast<double>(cold_calls), 1e-6 * static_cast<double>(cold_calls));
}

detail::Site g_outer{nullptr, "void rearmrecords::outer()", __FILE__, __LINE__, detail::kFunction};
detail::Site g_inner{nullptr, "void rearmrecords::inner()", __FILE__, __LINE__, detail::kFunction};
[[gnu::noinline]] void inner() { detail::Probe p(g_inner); }
[[gnu::noinline]] void outer() {
  detail::Probe p(g_outer);
  inner();
  inner();
}

// A re-arm window's record is not taken inside another one on the same thread: a sparse
// record's cost (its lines cold) is far over what the enclosing call's duration leaves out, so
// nested records would add to their callers' durations. Both sites re-armed, recorded in full: the
// outer calls are recorded and the inner calls inside them are not; an inner call on its own is.
TEST(BudgetRearmRecords, AReArmRecordIsNotTakenInsideAnother) {
  const std::shared_ptr<MemoryExporter> exporter = recordEveryCall();
  ASSERT_TRUE(exporter) << last_error();
  outer();  // registered
  const uint32_t top = std::max(g_outer.id.load(), g_inner.id.load());
  std::vector<double> probability(top + 1, 1.0), scale(top + 1, 1.0);
  scale[g_outer.id.load()] = scale[g_inner.id.load()] = 3;
  publish(probability, scale);
  for (int i = 0; i < 10; ++i) outer();
  for (int i = 0; i < 5; ++i) inner();
  clear();
  for (int i = 0; i < 4; ++i) outer();  // no budget: every call recorded again
  shutdown();
  int outer_spans = 0, inner_spans = 0;
  double outer_weight = 0, inner_weight = 0;
  for (const auto& span : exporter->spans()) {
    if (span.function.find("rearmrecords::outer") != std::string::npos) {
      ++outer_spans;
      outer_weight += span.weight;
    } else if (span.function.find("rearmrecords::inner") != std::string::npos) {
      ++inner_spans;
      inner_weight += span.weight;
    }
  }
  EXPECT_EQ(outer_spans, 1 + 10 + 4);
  EXPECT_DOUBLE_EQ(outer_weight, 1 + 10 * 3 + 4);
  EXPECT_EQ(inner_spans, 2 + 5 + 8);
  EXPECT_DOUBLE_EQ(inner_weight, 2 + 5 * 3 + 8);
}

}  // namespace
}  // namespace perfhat::budget
