// The collection budget in the running engine: real probes, the real background thread, the
// in-memory exporter. A hot class is sampled down to fit 3 % of the CPU, a light, important
// class is traced in full, and the exported weights still count every call.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <time.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "budget_controller.h"
#include "budget_test_workload.h"
#include "perfhat/memory_exporter.hpp"
#include "perfhat/perfhat.hpp"

PERFHAT_BUDGET_TEST_WORKLOAD(budgettest)

namespace {

// The plan is made from the probes' measured costs. Under AddressSanitizer a probe costs about
// 25 times as much (detection ~110-150 ns instead of ~6, a report ~640 ns), and detecting the hot
// class alone takes about 3.5 % of the CPU: there the same choice (cold traced, hot sampled) is
// asked of 10 %, between the least a plan can cost (the hot class's detection and the cold class
// traced, ~4 %) and the hot class traced in full (~24 %; at 30 % it fit, and was traced).
//
// What the plan then chooses still rests on those inflated costs and on how quickly the governor
// recovers from the start-up windows (traced in full before the first plan), which differ from
// machine to machine under a sanitizer: there the run checks what does not depend on costs (the
// classes, the status, each row's sampled counts), and the plan's choice and the weights' sums are
// checked in the ordinary build.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr const char* kBudget = "0.1";
constexpr bool kCostsAreTheProgramsOwn = false;
#else
constexpr const char* kBudget = "0.03";
constexpr bool kCostsAreTheProgramsOwn = true;
#endif

double seconds_now() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) + t.tv_nsec * 1e-9;
}

double process_cpu_s() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + t.tv_nsec * 1e-9;
}

// The governor's inputs injected: windows measured in this process's CPU time instead of wall
// time, and the collector's own CPU as a fixed 150 ns per recorded call. On a loaded machine (the
// test got 0.1-0.2 CPU-s a second) the real clocks cut the hot class's rate per second, and the
// collector's wakes, which come per wall second, and its cache-cold export became a large share
// of the little CPU the process had: the governor rightly scaled the plan down until the cold
// class was no longer traced. With these, the windows look the same whatever share of a core the
// test gets: the hot class costs ~400,000 calls/s x (detection + report + 150 ns), far over 3 %,
// the cold one ~4,000 calls/s. The probes' costs are still the start-up calibration's; the
// governor's response to a collector over budget is BudgetPlanner's to test.
double modeled_collector_cpu_s() {
  return static_cast<double>(perfhat::counters().spans_recorded) * 150e-9;
}
struct InjectedMeter {
  InjectedMeter() {
    perfhat::budget::Controller::get().set_meter(
        {&process_cpu_s, &process_cpu_s, &modeled_collector_cpu_s});
  }
  ~InjectedMeter() {
    perfhat::budget::Controller::get().set_meter(perfhat::budget::Meter::system());
  }
};

TEST(BudgetEngine, HotClassIsSampledColdClassTracedAndWeightsCountEveryCall) {
  const InjectedMeter meter;
  const std::string status = ::testing::TempDir() + "/budget_status.json";
  ::setenv("PERFHAT_BUDGET", kBudget, 1);
  ::setenv("PERFHAT_BUDGET_CLASSES", "hot=ns:budgettest::hot::*;cold=ns:budgettest::cold::*@5", 1);
  ::setenv("PERFHAT_BUDGET_WINDOWS", "2", 1);
  ::setenv("PERFHAT_BUDGET_STATUS", status.c_str(), 1);
  perfhat::Config c;
  c.sampler = "full";
  c.export_interval_s = 0.5;
  auto ex = std::make_shared<perfhat::MemoryExporter>();
  ASSERT_TRUE(perfhat::init(c, ex)) << perfhat::last_error();
  uint64_t hot_calls = 0, cold_calls = 0;
  const double until = seconds_now() + 4.0;
  while (seconds_now() < until) {
    for (int i = 0; i < 100; ++i, ++hot_calls) budgettest::hot::tick();
    budgettest::cold::step();
    ++cold_calls;
  }
  const perfhat::budget::Plan plan = perfhat::budget::Controller::get().plan();
  const std::string plan_json = perfhat::budget::Controller::get().status_json();
  perfhat::shutdown();
  const perfhat::Counters counters = perfhat::counters();
  SCOPED_TRACE(plan_json);
  SCOPED_TRACE("recorded " + std::to_string(counters.spans_recorded) + " exported " +
               std::to_string(counters.spans_exported) + " to aggregates " +
               std::to_string(counters.spans_to_aggregates) + " dropped " +
               std::to_string(counters.spans_dropped_export));
  ::unsetenv("PERFHAT_BUDGET");
  ::unsetenv("PERFHAT_BUDGET_CLASSES");
  ::unsetenv("PERFHAT_BUDGET_WINDOWS");
  ::unsetenv("PERFHAT_BUDGET_STATUS");

  // hot and cold, and in a process that ran other engine tests before (--gtest_repeat) a class
  // per namespace of their probes, which did nothing here.
  std::map<std::string, perfhat::budget::ClassPlan> by_name;
  for (const auto& k : plan.classes) by_name[k.name] = k;
  ASSERT_TRUE(by_name.count("hot") && by_name.count("cold"));
  if (kCostsAreTheProgramsOwn) {
    EXPECT_TRUE(by_name["cold"].traced);
    EXPECT_LT(by_name["hot"].fraction, 0.9);
  }
  // The plan samples the hot class when detecting its calls fits the budget with room to spare.
  // Where detection alone costs more than the budget (a sanitizer's price on a loaded machine:
  // 400 ns a call at 330,000 calls a second is 0.13 s a second against 0.1 allowed), the
  // planner's rule leaves the class undetected instead; in between, the weights and floors decide.
  const perfhat::budget::ClassPlan& hot = by_name["hot"];
  const double hot_detect_cpu_per_s = hot.frequency_hz * plan.costs.detect_s;
  SCOPED_TRACE("detecting hot: " + std::to_string(hot_detect_cpu_per_s) + " s/s");
  if (hot_detect_cpu_per_s < 0.5 * plan.allowed_cpu_per_s) {
    EXPECT_TRUE(hot.detected);
    EXPECT_GT(hot.fraction, 0);
  } else if (hot_detect_cpu_per_s > plan.allowed_cpu_per_s) {
    EXPECT_FALSE(hot.detected);
    EXPECT_EQ(hot.fraction, 0);
  }
  EXPECT_GT(by_name["hot"].frequency_hz, 1000);
  EXPECT_GT(plan.changes, 0u);
  // What the editor re-solves the plan with (server/budget/collection_budget.cc).
  EXPECT_GT(plan.allowed_cpu_per_s, 0);
  EXPECT_GT(plan.process_cpu_per_s, plan.allowed_cpu_per_s);

  std::map<std::string, double> weighted;
  std::map<std::string, uint64_t> spans;
  for (const auto& s : ex->spans()) {
    const std::string key = s.function.find("hot::tick") != std::string::npos ? "hot" : "cold";
    weighted[key] += s.weight;
    ++spans[key];
  }
  // Calls recorded while a span ring was full went to the aggregates, with their weights.
  for (const auto& h : ex->histograms()) {
    if (h.data.kind != perfhat::HistogramData::kFunction) continue;
    const bool is_hot = h.site.function.find("hot::tick") != std::string::npos;
    weighted[is_hot ? "hot" : "cold"] += h.data.count();
    // A row says how much of it was sampled: the handler marks it estimated.
    EXPECT_LE(h.data.sampled_calls, h.data.count() * (1 + 1e-9));
    EXPECT_LE(h.data.sampled_records, h.data.sampled_calls * (1 + 1e-9));
  }
  // Fewer spans than calls, yet the weights add up to the calls (Horvitz-Thompson).
  EXPECT_LT(spans["hot"], hot_calls * 0.9);
  if (kCostsAreTheProgramsOwn) {
    EXPECT_NEAR(weighted["hot"] / static_cast<double>(hot_calls), 1.0, 0.1)
        << spans["hot"] << " spans for " << hot_calls << " calls";
    EXPECT_NEAR(weighted["cold"] / static_cast<double>(cold_calls), 1.0, 0.02);
  }

  std::ifstream in(status);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_NE(text.str().find("\"name\":\"hot\""), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("\"allowed_cpu_per_s\":"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("\"function\":\"budgettest::cold::step\",\"class\":\"cold\""),
            std::string::npos)
      << text.str();
  // The controller keeps its settings after shutdown (an exit would write the status again).
  ASSERT_TRUE(perfhat::budget::Controller::get().configure(perfhat::budget::Settings{}));
  std::remove(status.c_str());
}

TEST(BudgetEngine, ProbingModeCoversUntracedClassesWithStackSamples) {
  ::setenv("PERFHAT_BUDGET", kBudget, 1);
  ::setenv("PERFHAT_BUDGET_MODE", "probing", 1);
  ::setenv("PERFHAT_BUDGET_CLASSES", "hot=ns:budgettest::hot::*;cold=ns:budgettest::cold::*@5", 1);
  ::setenv("PERFHAT_BUDGET_WINDOWS", "2", 1);
  perfhat::Config c;
  c.sampler = "full";
  c.export_interval_s = 0.5;
  auto ex = std::make_shared<perfhat::MemoryExporter>();
  ASSERT_TRUE(perfhat::init(c, ex)) << perfhat::last_error();
  auto& controller = perfhat::budget::Controller::get();
  // 3.5 s, and on a loaded machine (the background thread's ticks late) until the stack samples
  // of a probing plan have been drained at least once, at most 30 s.
  const double start = seconds_now();
  while (seconds_now() < start + 3.5 ||
         (controller.sampled().empty() && seconds_now() < start + 30)) {
    for (int i = 0; i < 100; ++i) budgettest::hot::tick();
    budgettest::cold::step();
  }
  const perfhat::budget::Plan plan = controller.plan();
  const auto sampled = controller.sampled();
  const std::string json = controller.status_json();
  perfhat::shutdown();
  for (const char* v : {"PERFHAT_BUDGET", "PERFHAT_BUDGET_MODE", "PERFHAT_BUDGET_CLASSES",
                        "PERFHAT_BUDGET_WINDOWS"})
    ::unsetenv(v);
  SCOPED_TRACE(json);
  std::map<std::string, perfhat::budget::ClassPlan> by_name;  // as in the test above
  for (const auto& k : plan.classes) by_name[k.name] = k;
  ASSERT_TRUE(by_name.count("hot") && by_name.count("cold"));
  EXPECT_TRUE(plan.probing);
  const auto& hot = by_name["hot"];
  const auto& cold = by_name["cold"];
  EXPECT_FALSE(hot.traced);  // 150,000 calls/s do not fit in 3 %
  EXPECT_TRUE(cold.traced);
  EXPECT_GT(plan.probing_hz, 0);
  // The untraced hot class shows up in the symbolised stack samples, under its own name.
  uint64_t hot_samples = 0;
  for (const auto& f : sampled)
    if (f.function.find("budgettest::hot::tick") != std::string::npos) hot_samples = f.samples;
  EXPECT_GT(hot_samples, 0u);
  // The leaf of a sample is the interrupted function, not the signal machinery.
  uint64_t self_in_test = 0;
  for (const auto& f : sampled)
    if (f.function.find("budgettest::") != std::string::npos) self_in_test += f.self;
  EXPECT_GT(self_in_test, 0u);
}

}  // namespace
