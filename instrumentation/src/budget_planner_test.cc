// The online planner: the solver's answers through the CPU-budget conversion, smoothing and
// hysteresis (no oscillation on stationary input), pins and the governor.
#include "budget_planner.h"

#include <gtest/gtest.h>

#include <array>
#include <random>

namespace perfhat::budget {
namespace {

// One process CPU second per wall second; detection 20 ns, report 1 µs.
constexpr Costs kCosts{20e-9, 1e-6};

// A stationary workload: four classes of different rates, durations and weights.
std::vector<ClassWindow> stationary() {
  return {{"db", 20000, 0.30, 2, false},
          {"http", 500, 0.50, 1, false},
          {"util", 200000, 0.10, 1, false},
          {"render", 3000, 0.05, 3, false}};
}

// The same with each class's calls and time moved by up to ±noise.
std::vector<ClassWindow> stationary(double noise, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(1 - noise, 1 + noise);
  std::vector<ClassWindow> w = stationary();
  for (ClassWindow& k : w) {
    k.calls *= u(rng);
    k.busy_s *= u(rng);
  }
  return w;
}

WindowCost second(double collector = 0) { return {1.0, 1.0, collector, 0}; }

const ClassPlan& find(const Plan& p, const std::string& name) {
  for (const ClassPlan& c : p.classes)
    if (c.name == name) return c;
  throw std::runtime_error("no class " + name);
}

// A 1 % budget, stated rather than left to the default: the tests' figures are shares of it.
PlannerOptions onePercent(bool probing = false) {
  PlannerOptions o;
  o.budget_share = 0.01;
  o.probing = probing;
  return o;
}

// One window of the sample service's loop (bench/README.md): each class's calls wobble by ±3 %,
// the collector's price of a record by ±5 % and the process's CPU by ±10 %.
struct ServiceWindow {
  std::vector<ClassWindow> classes;
  Costs costs;
  double process_cpu_s;
};

ServiceWindow serviceWindow(const std::vector<ClassWindow>& classes, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  ServiceWindow w{classes, {13e-9, 0}, 0};
  for (ClassWindow& k : w.classes) k.calls *= 1 + 0.03 * u(rng);
  w.costs.report_s = 620e-9 * (1 + 0.05 * u(rng));
  w.costs.cold_s = 750e-9;
  w.process_cpu_s = 0.085 * (1 + 0.1 * u(rng));
  return w;
}

// The sample service's classes: one too busy to detect, a marginal one, three cheap ones; `cold`
// is each one's cold probe entries per window.
std::vector<ClassWindow> serviceClasses(const std::array<double, 5>& cold) {
  return {{"anon", 46500, 0.02, 1, false, cold[0]},
          {"agile", 4000, 0.05, 1, false, cold[1]},
          {"service", 600, 0.30, 1, false, cold[2]},
          {"api", 300, 0.60, 1, false, cold[3]},
          {"story", 60, 0.01, 1, false, cold[4]}};
}

// Runs 90 windows of the sample service's loop on `planner`; `cost(w, window)` is window w's
// measured cost, that of the plan the window before adopted (planner.plan()). Returns how many
// plans were adopted by window 40, when the loop has settled.
template <typename Cost>
std::size_t runServiceLoop(Planner& planner, const std::vector<ClassWindow>& classes,
                           std::mt19937& rng, Cost cost) {
  std::size_t changes_settled = 0;
  for (int w = 0; w < 90; ++w) {
    const ServiceWindow window = serviceWindow(classes, rng);
    const Plan& p = planner.observe(window.classes, cost(w, window), window.costs);
    if (w == 40) changes_settled = p.changes;
  }
  return changes_settled;
}

// Most tests drive one planner at a 1 % budget through windows of the stationary workload.
class BudgetPlanner : public ::testing::Test {
 protected:
  // One window of the stationary workload, its collector costing `collector` CPU-s.
  const Plan& observe(double collector = 0) {
    return planner_.observe(stationary(), second(collector), kCosts);
  }
  // The governor's cuts in `windows` windows, the collector costing `collector(w)` in window w.
  struct Cut {
    int window;
    double factor;    // the governor after the cut over the one before it
    double governor;  // after the cut
  };
  template <typename Collector>
  std::vector<Cut> cuts(int windows, Collector collector) {
    std::vector<Cut> out;
    double last = planner_.plan().governor;
    for (int w = 0; w < windows; ++w) {
      const double governor = observe(collector(w)).governor;
      if (governor < last) out.push_back({w, governor / last, governor});
      last = governor;
    }
    return out;
  }

  const PlannerOptions o_ = onePercent();
  Planner planner_{o_};
};

TEST_F(BudgetPlanner, PaperUseCaseThroughTheCpuBudget) {
  // MaxF = 925 events/s with report cost 1 ms and no detection cost: 0.925 CPU-s per second.
  std::vector<ClassPlan> classes = {{"file", 359, 0.30, 1},
                                    {"window", 189, 0.23, 1},
                                    {"kernel", 153, 0.09, 1},
                                    {"font", 334, 0.11, 1},
                                    {"others", 630, 0.27, 1}};
  // The extract's table (seed 002 §4.2); the solver's own tests check every variation.
  Plan p = solvePlan(classes, 0.925, 1.0, {0, 1e-3}, true, 1e9);
  EXPECT_NEAR(p.max_f, 925, 1e-6);
  for (const ClassPlan& c : p.classes) EXPECT_FALSE(c.traced) << c.name;
  EXPECT_NEAR(p.probing_hz, 925, 1e-6);
  EXPECT_NEAR(p.value, 925.0, 1e-6);
  classes[0].weight = 2;
  p = solvePlan(classes, 0.925, 1.0, {0, 1e-3}, true, 1e9);
  EXPECT_TRUE(find(p, "file").traced);
  EXPECT_TRUE(find(p, "window").traced);
  EXPECT_TRUE(find(p, "font").traced);
  EXPECT_NEAR(p.value, 1256.48, 1e-6);
}

// MaxF far above the stack sampler's ceiling: the unlimited probe of the paper's model would take
// it all, the capped one cannot, so the budget past the ceiling goes to tracing.
TEST_F(BudgetPlanner, ProbeCeilingSendsSpareBudgetToTracing) {
  std::vector<ClassPlan> classes = {{"hot", 430000, 0.77, 1}, {"cold", 4300, 0.10, 5}};
  Plan p = solvePlan(classes, 45660 * 1e-6, 1.0, {0, 1e-6}, true, 1000);
  EXPECT_FALSE(find(p, "hot").traced);
  EXPECT_TRUE(find(p, "cold").traced);
  EXPECT_DOUBLE_EQ(p.probing_hz, 1000);
  EXPECT_NEAR(p.value, 4300 * 5 + 1000 * 0.77, 1e-6);
}

// A stack sample priced at what the signal handler measured (40 µs) instead of a traced event's
// price (1 µs): the budget buys 40 times fewer samples, and the plan's predicted cost stays the
// budget.
TEST_F(BudgetPlanner, StackSamplesArePricedAtTheirMeasuredCost) {
  std::vector<ClassPlan> classes = {{"hot", 430000, 0.77, 1}, {"cold", 400, 0.10, 5}};
  Costs c{0, 1e-6};
  Plan equal = solvePlan(classes, 0.01, 1.0, c, true, 1e9);
  EXPECT_FALSE(find(equal, "cold").traced);  // 10,000 probes a second are worth more
  EXPECT_NEAR(equal.probing_hz, 10000, 1e-6);
  c.sample_s = 40e-6;
  Plan priced = solvePlan(classes, 0.01, 1.0, c, true, 1e9);
  // At that price the samples are worth less than tracing the light, heavy class.
  EXPECT_TRUE(find(priced, "cold").traced);
  EXPECT_NEAR(priced.probing_hz, (10000 - 400) / 40.0, 1e-6);
  EXPECT_NEAR(priced.predicted_overhead, 0.01, 1e-9);
}

TEST_F(BudgetPlanner, DetectionIsPaidFirstAndRatesFillTheRest) {
  std::vector<ClassPlan> classes = {{"a", 1000, 0.1, 2}, {"b", 100000, 0.1, 1}};
  // 0.01 CPU-s/s allowed; detection takes 101000 × 20 ns = 2.02 ms; 7.98 ms left = 7980 reports.
  Plan p = solvePlan(classes, 0.01, 1.0, kCosts, false, 1000);
  EXPECT_NEAR(p.max_f, 7980, 1e-6);
  EXPECT_DOUBLE_EQ(find(p, "a").fraction, 1.0);  // heavier weight first
  EXPECT_NEAR(find(p, "b").fraction, 6980.0 / 100000, 1e-12);
  EXPECT_NEAR(p.predicted_overhead, 0.01, 1e-9);
  EXPECT_FALSE(p.over_budget);
}

TEST_F(BudgetPlanner, PinnedClassIsTracedWhateverItsWeight) {
  std::vector<ClassPlan> classes = {{"a", 1000, 0.1, 5}, {"b", 5000, 0.1, 0.1}};
  classes[1].pinned = true;
  for (bool probing : {false, true}) {
    Plan p = solvePlan(classes, 0.006, 1.0, {0, 1e-6}, probing, 1000);
    EXPECT_TRUE(find(p, "b").traced) << probing;
    EXPECT_DOUBLE_EQ(find(p, "b").fraction, 1.0);
    EXPECT_NEAR(find(p, "a").fraction, probing ? 1.0 : 1.0, 1e-12);  // 6000 fit exactly
  }
  // Over the budget: the pin still wins and the plan says so.
  Plan p = solvePlan(classes, 0.001, 1.0, {0, 1e-6}, false, 1000);
  EXPECT_DOUBLE_EQ(find(p, "b").fraction, 1.0);
  EXPECT_DOUBLE_EQ(find(p, "a").fraction, 0.0);
  EXPECT_TRUE(p.over_budget);
}

TEST_F(BudgetPlanner, StationaryInputSettlesOnOnePlan) {
  for (bool probing : {false, true}) {
    Planner planner(onePercent(probing));
    const auto settled = static_cast<int>(planner.options().windows);
    Plan first;
    for (int w = 0; w < 100; ++w) {
      const Plan& p = planner.observe(stationary(), second(), kCosts);
      if (w == settled) first = p;
      if (w > settled) {
        for (std::size_t i = 0; i < p.classes.size(); ++i) {
          ASSERT_EQ(p.classes[i].fraction, first.classes[i].fraction) << w;
          ASSERT_EQ(p.classes[i].traced, first.classes[i].traced) << w;
        }
      }
    }
    EXPECT_EQ(planner.plan().changes, 1u) << probing;  // the first plan is never replaced
  }
}

// Noise of ±5 % around a stationary workload: without hysteresis the plan follows the noise; with
// it the plan changes a handful of times at most in 300 windows.
TEST_F(BudgetPlanner, HysteresisStopsOscillationUnderNoise) {
  for (bool probing : {false, true}) {
    auto run = [&](bool hysteresis) {
      PlannerOptions o = onePercent(probing);
      if (!hysteresis) {
        o.hysteresis = 0;
        o.min_rate_change = 0;
      }
      Planner planner(o);
      std::mt19937 rng(7);
      for (int w = 0; w < 300; ++w) planner.observe(stationary(0.05, rng), second(), kCosts);
      return planner.plan().changes;
    };
    const std::size_t with = run(true), without = run(false);
    EXPECT_LE(with, 5u) << probing;
    if (!probing) {
      EXPECT_GE(without, 100u);  // rates follow every wobble without it
    }
  }
}

TEST_F(BudgetPlanner, GovernorScalesDownWhenTheMeasuredCostIsOverBudget) {
  // The collector really costs twice what the model predicts (say, export is dearer).
  double measured = 0;
  for (int w = 0; w < 40; ++w)
    measured = 2 * observe(measured).predicted_overhead;  // next window's measurement
  EXPECT_LT(planner_.plan().governor, 0.6);
  // Within the governor's band around the budget (it does not chase costs inside it).
  EXPECT_LE(measured, o_.budget_share * (1 + o_.governor_band));
  EXPECT_GE(measured, o_.budget_share * (1 - 2 * o_.governor_band));  // and not starved either
}

// The collector's fixed part alone (waking, phase-1 export) costs more than the budget: nothing
// is left for any class, and the plan says it is over budget rather than within it.
TEST_F(BudgetPlanner, AFixedCollectorCostOverTheBudgetIsOverBudget) {
  for (bool probing : {true, false}) {
    Planner planner(onePercent(probing));
    WindowCost w = second(0.02);
    w.fixed_cpu_s = 0.02;  // 2 % of the CPU, twice the budget
    for (int i = 0; i < 5; ++i) planner.observe(stationary(), w, kCosts);
    const Plan& p = planner.plan();
    EXPECT_TRUE(p.over_budget) << (probing ? "probing" : "rates");
    EXPECT_EQ(p.max_f, 0) << (probing ? "probing" : "rates");
  }
}

// One dear window (10 % of the CPU, a start-up burst) among windows at 0.4 %: its mean over the
// sliding window is over the 1 % budget for ten windows. The governor cuts once, by the measured
// excess, and then measures what the cut plan costs; cutting again at every window while the
// dear one stayed in the mean took the plan to its floor.
TEST_F(BudgetPlanner, GovernorCutsOncePerOverBudgetEpisode) {
  const std::vector<Cut> cut = cuts(40, [](int w) { return w == 10 ? 0.10 : 0.004; });
  ASSERT_EQ(cut.size(), 1u);
  // Proportional: the ten windows' mean was (9 × 0.4 % + 10 %) / 10 = 1.36 %.
  EXPECT_NEAR(cut[0].governor, o_.governor_aim * 0.01 / 0.0136, 1e-9);
  EXPECT_DOUBLE_EQ(planner_.plan().governor, 1.0);  // the cheap windows after it raised it back
}

// The window before the first plan records every call: however dear, it is not held against
// the plans that follow (the governor judges only windows run under a plan).
TEST_F(BudgetPlanner, GovernorIgnoresTheWindowBeforeTheFirstPlan) {
  observe(0.25);  // start-up: 25 % of the CPU
  for (int w = 0; w < 20; ++w) EXPECT_DOUBLE_EQ(observe(0.009).governor, 1.0) << w;
}

// Nor the windows that export what the start-up recorded (WindowCost::startup): 12 % of the CPU
// in the first plan's windows on the sample service, which the governor's first judgement took
// as the plan's and cut a 1 % plan to its floor.
TEST_F(BudgetPlanner, GovernorIgnoresTheStartUpsExport) {
  observe(0.25);  // before the first plan
  for (int w = 0; w < 30; ++w) {
    WindowCost cost = second(w < 6 ? 0.12 : 0.008);
    cost.startup = w < 6;
    EXPECT_DOUBLE_EQ(planner_.observe(stationary(), cost, kCosts).governor, 1.0) << w;
  }
}

// Costs inside the band around the budget (over by less than governor_band, or under by less
// than twice that) move nothing; a cost over it that does not respond to the plan is cut again
// only after each settling period, each time by that period's own excess.
TEST_F(BudgetPlanner, GovernorHasABandAndWaitsForTheCutPlanToBeMeasured) {
  for (double cost : {0.0105, 0.0085}) {
    for (int w = 0; w < 30; ++w) observe(cost);
    EXPECT_DOUBLE_EQ(planner_.plan().governor, 1.0) << cost;
  }
  for (int w = 0; w < 30; ++w) observe(0.0085);
  const std::vector<Cut> cut = cuts(40, [](int) { return 0.02; });
  ASSERT_GE(cut.size(), 2u);
  const auto settle = static_cast<int>(o_.windows / 2);
  for (std::size_t i = 1; i < cut.size(); ++i) EXPECT_GE(cut[i].window - cut[i - 1].window, settle);
  // After the first, each cut measured only windows at 2 %: by 0.95 × 1 % / 2 % (until the
  // governor's floor stops it).
  for (std::size_t i = 1; i < cut.size(); ++i)
    if (cut[i].governor > o_.governor_floor) {
      EXPECT_NEAR(cut[i].factor, o_.governor_aim * 0.5, 1e-9) << i;
    }
  EXPECT_DOUBLE_EQ(planner_.plan().governor, o_.governor_floor);
}

// One window in five the collector exports and sends its status: 3 % of the CPU in that window,
// 0.2 % in the others, 0.76 % on average, within a 1 % budget. The governor keeps the plan whole;
// cutting it at each dear window (×0.5 there, ×1.1 per window after) drove it to its floor.
TEST_F(BudgetPlanner, GovernorLooksThroughPeriodicCollectorSpikes) {
  for (int w = 0; w < 40; ++w) observe(w % 5 == 4 ? 0.03 : 0.002);
  EXPECT_DOUBLE_EQ(planner_.plan().governor, 1.0);
  // The same collector at 3 % in every window is cut.
  for (int w = 0; w < 10; ++w) observe(0.03);
  EXPECT_LT(planner_.plan().governor, 0.5);
}

// The status's collector part of one window swings with the exports (3 % of the CPU in one
// window in five, 0.2 % in the others here); a profile of a run sees their mean, 0.76 %. The plan
// reports that mean beside the last window's figure, which read a third of perf's share of the
// collector thread on the sample service.
TEST_F(BudgetPlanner, ThePlanReportsTheCollectorsMeanShare) {
  for (int w = 0; w < 20; ++w) observe(w % 5 == 4 ? 0.03 : 0.002);
  EXPECT_NEAR(planner_.plan().collector_share_mean, (2 * 0.03 + 8 * 0.002) / 10, 1e-12);
  EXPECT_NEAR(planner_.plan().measured_overhead, 0.03, 1e-12);  // the last window, an export
}

// Detection alone grows over the budget: the running plan's traced classes are dropped at once
// (the candidate is the least the budget allows), not kept because the candidate is over too.
TEST_F(BudgetPlanner, OverBudgetDropsTheRunningPlan) {
  std::vector<ClassWindow> w = {{"a", 1000, 0.01, 5, false}, {"b", 10000, 0.01, 1, false}};
  planner_.observe(w, second(), kCosts);
  EXPECT_DOUBLE_EQ(find(planner_.plan(), "a").fraction, 1.0);
  w[1].calls = 1e6;  // 1e6 calls × 20 ns = 2 % of the CPU: detection alone is over 1 %
  for (int i = 0; i < 10; ++i) planner_.observe(w, second(), kCosts);
  // The running plan (b detected at its floor) no longer fits: b is left undetected, and the
  // budget goes to a.
  EXPECT_FALSE(find(planner_.plan(), "b").detected);
  EXPECT_DOUBLE_EQ(find(planner_.plan(), "a").fraction, 1.0);
  EXPECT_LE(planner_.plan().predicted_overhead, 0.01 * (1 + 1e-9));
  EXPECT_FALSE(planner_.plan().over_budget);
}

// Rates mode pays detection for every call of a detected class; when detecting them all (with
// their floors) is over the budget, whole classes are left undetected, so the plan fits instead of
// overshooting by the excess: the heaviest weight kept first, among equal weights the cheapest.
TEST_F(BudgetPlanner, RatesLeaveClassesUndetectedWhenDetectingThemAllDoesNotFit) {
  std::vector<ClassPlan> classes = {{"db", 20000, 0.3, 2},
                                    {"http", 500, 0.5, 1},
                                    {"util", 200000, 0.1, 1},
                                    {"render", 3000, 0.05, 1}};
  // Detecting all 223,500 calls/s at 20 ns is 4.47 ms/s; 2 ms/s allowed.
  Plan p = solvePlan(classes, 0.002, 1.0, kCosts, false, 1000, 0.001);
  EXPECT_FALSE(find(p, "util").detected);
  EXPECT_DOUBLE_EQ(find(p, "util").fraction, 0.0);
  for (const char* kept : {"db", "http", "render"}) {
    EXPECT_TRUE(find(p, kept).detected) << kept;
    EXPECT_GE(find(p, kept).fraction, 0.001) << kept;
  }
  EXPECT_FALSE(p.over_budget);
  EXPECT_LE(p.predicted_overhead, 0.002 * (1 + 1e-9));
  EXPECT_GT(p.predicted_overhead, 0.0015);  // the rest of the budget still buys records
  // Within the budget every class stays detected, as before.
  p = solvePlan(classes, 0.01, 1.0, kCosts, false, 1000, 0.001);
  for (const ClassPlan& k : p.classes) EXPECT_TRUE(k.detected) << k.name;
}

// A detected class pays its cold probe entries (one per site and request, Costs::cold_s each) on
// top of its calls' detection: a class of many sites called once per request costs more than its
// call rate says, and the plan counts it.
TEST_F(BudgetPlanner, RatesPriceADetectedClassesColdEntries) {
  std::vector<ClassPlan> classes = {{"wide", 3000, 0.1, 1}, {"narrow", 3000, 0.1, 1}};
  classes[0].cold_hz = 3000;  // every call of "wide" finds its lines cold
  classes[1].cold_hz = 30;
  Costs c = kCosts;
  c.cold_s = 200e-9;
  // Detection 60 µs/s each; cold 600 µs/s for "wide", 6 µs/s for "narrow".
  Plan p = solvePlan(classes, 0.0005, 1.0, c, false, 1000, 0.001);
  EXPECT_TRUE(find(p, "narrow").detected);
  EXPECT_FALSE(find(p, "wide").detected);
  EXPECT_LE(p.predicted_overhead, 0.0005 * (1 + 1e-9));
  p = solvePlan(classes, 0.01, 1.0, c, false, 1000, 0.001);
  EXPECT_NEAR(find(p, "wide").overhead,
              3000 * (20e-9 + find(p, "wide").fraction * 1e-6) + 3000 * 200e-9, 1e-12);
}

// The planner and governor in a loop against an injected cost model: each window's measured
// probe cost is what the running plan really costs (detection of its detected classes, their
// cold entries, their records) plus a part no plan controls (request contexts, 15 % of the
// budget). At a budget below the cost of detecting every class the measured overhead settles
// within the governor's band of the budget, with some classes left undetected; with every class
// detected (the plan before) it stayed at the detection's 2.2 % whatever the governor did.
TEST_F(BudgetPlanner, RatesKeepToABudgetSmallerThanDetectingEveryCall) {
  Costs c = kCosts;
  c.cold_s = 150e-9;
  std::vector<ClassWindow> w = {{"db", 20000, 0.3, 2, false, 300},
                                {"http", 500, 0.5, 1, false, 300},
                                {"util", 1000000, 0.1, 1, false, 3000},
                                {"render", 3000, 0.05, 1, false, 900}};
  // Detecting all: 1,023,500 x 20 ns + 4,500 cold x 150 ns = 21.1 ms of each CPU second.
  double measured = 0, last_share = 0;
  for (int i = 0; i < 60; ++i) {
    WindowCost cost = second();
    cost.probe_cost_s = measured;
    const Plan& p = planner_.observe(w, cost, c);
    measured = 0.15 * o_.budget_share;
    for (const ClassPlan& k : p.classes) {
      if (!k.detected) continue;
      measured += k.frequency_hz * (c.detect_s + k.fraction * c.report_s) + k.cold_hz * c.cold_s;
    }
    last_share = measured;  // one CPU second per window
  }
  EXPECT_FALSE(find(planner_.plan(), "util").detected);
  EXPECT_TRUE(find(planner_.plan(), "db").detected);
  EXPECT_LE(last_share, o_.budget_share * (1 + o_.governor_band));
  EXPECT_GE(last_share, o_.budget_share * 0.5);  // and uses the budget
}

// The sample service's loop, as measured at a 3 % budget in rates mode (bench/README.md): one
// class too busy to detect, a marginal class sampled at a few %, three traced in full; the
// process's CPU per window wobbles by ±10 %, the collector's price of a record by ±5 %, and the
// collector exports every fifth window. Each window's measured cost is what the running plan
// really costs. A steady workload must settle on one plan: re-planning whenever the marginal
// class's share moved by 10 % of itself changed the plan in 20-25 of 30 windows there (each
// change a new table, a status write and a status post).
TEST_F(BudgetPlanner, ASteadyServiceLoopKeepsOnePlan) {
  PlannerOptions o;
  o.budget_share = 0.03;
  Planner planner(o);
  std::mt19937 rng(17);
  const std::size_t changes_settled = runServiceLoop(
      planner, serviceClasses({3000, 1200, 300, 300, 60}), rng,
      [&](int w, const ServiceWindow& window) {
        const Costs& c = window.costs;  // detection and cold entries: the same in every window
        double probes = 0;
        for (const ClassPlan& k : planner.plan().classes)
          if (k.detected)
            probes += k.frequency_hz * (c.detect_s + k.fraction * 500e-9) + k.cold_hz * c.cold_s;
        const double collector = w % 5 == 4 ? 0.003 : 0.0005;
        return WindowCost{1.0, window.process_cpu_s, collector, probes, 0.0002};
      });
  EXPECT_LE(planner.plan().changes - changes_settled, 1u);
  EXPECT_LE(planner.plan().changes, 8u);  // the start-up and the governor's few actions
  // And the plan it keeps uses the budget, within the governor's band.
  EXPECT_LE(planner.plan().measured_overhead_mean, o.budget_share * (1 + o.governor_band));
  EXPECT_GE(planner.plan().measured_overhead_mean, o.budget_share * (1 - 2 * o.governor_band));
}

// The same loop at a 1 % budget, where the collector's fixed part takes most of it: the plans
// share a remainder of about 0.0002 CPU-s/s, the difference of two noisy figures (the process's
// CPU ±10 %, the fixed part ±15 % per window). Bands sized against that remainder made a few %
// of noise in either figure look like a plan over budget or one leaving room, and the plan
// changed every few windows (3-18 times in 30 s on the sample service; here 16 changes after
// window 40 and 24 in all). Sized against the whole budget, the same noise is inside them.
TEST_F(BudgetPlanner, ASteadyLoopKeepsOnePlanWhenTheFixedPartLeavesLittle) {
  std::mt19937 rng(23);
  std::uniform_real_distribution<double> u(-1, 1);
  Costs before;  // the prices in the window the running plan was adopted in
  const std::size_t changes_settled =
      runServiceLoop(planner_, serviceClasses({3000, 100, 60, 60, 20}), rng,
                     [&](int w, const ServiceWindow& window) {
                       double probes = 0, records = 0;
                       for (const ClassPlan& k : planner_.plan().classes)
                         if (k.detected) {
                           probes += k.frequency_hz * before.detect_s + k.cold_hz * before.cold_s;
                           records += k.frequency_hz * k.fraction * before.report_s;
                         }
                       before = window.costs;
                       const double fixed = 0.00055 * (1 + 0.15 * u(rng));
                       // The records' cost lands with the export, every fifth window.
                       const double collector = fixed + (w % 5 == 4 ? 5 * records : 0);
                       return WindowCost{1.0, window.process_cpu_s, collector, probes, fixed};
                     });
  EXPECT_LE(planner_.plan().changes - changes_settled, 1u);
  EXPECT_LE(planner_.plan().changes, 8u);
  EXPECT_FALSE(planner_.plan().over_budget);
  // The plan it keeps records something and keeps to the budget.
  double recorded = 0;
  for (const ClassPlan& k : planner_.plan().classes) recorded += k.frequency_hz * k.fraction;
  EXPECT_GT(recorded, 0);
  EXPECT_LE(planner_.plan().measured_overhead_mean, o_.budget_share * (1 + o_.governor_band));
}

// A `weight CLASS W` line re-plans at once, like a pin, even when the running plan uses its
// whole allowance (no widening is due): the editor's what-if promises the new weights.
TEST_F(BudgetPlanner, RatesReplanWhenAWeightChanges) {
  for (int w = 0; w < 20; ++w) observe();
  const Plan before = planner_.plan();
  auto window = stationary();
  window[2].weight = 50;  // util
  const Plan& p = planner_.observe(window, second(), kCosts);
  EXPECT_EQ(p.changes, before.changes + 1);
  EXPECT_DOUBLE_EQ(find(p, "util").weight, 50);
  EXPECT_GT(find(p, "util").fraction, find(before, "util").fraction);
  // A class absent from a window did nothing in it: it keeps its weight and pin.
  window.erase(window.begin());  // db, weight 2
  for (int w = 0; w < 3; ++w) planner_.observe(window, second(), kCosts);
  EXPECT_DOUBLE_EQ(find(planner_.plan(), "db").weight, 2);
}

// The collector's fixed part takes 93 % of the budget, so the allowance (0.0007 CPU-s/s) is
// smaller than 10 % of the whole budget: the widen band is capped at half the allowance, so a
// plan narrowed by a one-window spike of calls widens again once the spike has slid out.
TEST_F(BudgetPlanner, RatesWidenAfterASpikeWhenTheAllowanceIsSmall) {
  const Costs costs{1e-9, 1e-6};
  const WindowCost cost{1.0, 1.0, 0.0093, 0, 0.0093};
  auto calls = [&](double n) { return planner_.observe({{"a", n, 0.1, 1, false}}, cost, costs); };
  for (int w = 0; w < 20; ++w) calls(10000);
  const double settled = find(planner_.plan(), "a").fraction;
  EXPECT_GT(settled, 0.05);
  calls(200000);
  EXPECT_LT(find(planner_.plan(), "a").fraction, settled * 0.5);  // narrowed to fit
  for (int w = 0; w < 2 * static_cast<int>(o_.windows); ++w) calls(10000);
  EXPECT_NEAR(find(planner_.plan(), "a").fraction, settled, settled * 0.05);
}

// The plan carries the prices it was solved with (the sliding means, not the last window's):
// re-solving it with them, as the editor does from the status, gives the running plan.
TEST_F(BudgetPlanner, ThePlansPricesReproduceIt) {
  std::size_t changes = 0, adopted = 0;
  for (int w = 0; w < 12; ++w) {
    const Costs last{20e-9, (w % 2 ? 0.6e-6 : 1.4e-6)};
    const Plan& p = planner_.observe(stationary(), second(), last);
    if (w > 0) {
      EXPECT_NE(p.costs.report_s, last.report_s) << w;  // the mean, not the last window's
    }
    const Plan again = solvePlan(p.classes, p.allowed_cpu_per_s, p.process_cpu_per_s, p.costs,
                                 p.probing, o_.max_probe_hz, o_.min_fraction);
    if (p.changes > changes) {  // adopted in this window (a kept plan was solved earlier)
      for (std::size_t i = 0; i < p.classes.size(); ++i)
        EXPECT_DOUBLE_EQ(again.classes[i].fraction, p.classes[i].fraction) << w << i;
    }
    adopted += p.changes > changes ? 1 : 0;
    changes = p.changes;
  }
  EXPECT_GE(adopted, 2u);
}

TEST_F(BudgetPlanner, NewClassIsPlannedAtOnce) {
  observe();
  auto w = stationary();
  w.push_back({"late", 100, 0.01, 1, true});
  const Plan& p = planner_.observe(w, second(), kCosts);
  EXPECT_TRUE(find(p, "late").traced);
  EXPECT_EQ(p.changes, 2u);
}

}  // namespace
}  // namespace perfhat::budget
