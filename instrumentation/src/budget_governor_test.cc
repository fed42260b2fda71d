// The planner's governor against plans that change: it judges a new plan on the windows that
// plan ran, reacts within a bounded number of windows however often plans change, and climbs
// back at a bounded pace once under budget.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "budget_planner.h"

namespace perfhat::budget {
namespace {

constexpr Costs kGovernorCosts{20e-9, 1e-6};

std::vector<ClassWindow> classes(int extra = 0) {
  std::vector<ClassWindow> w = {{"db", 20000, 0.30, 2, false},
                                {"http", 500, 0.50, 1, false},
                                {"util", 200000, 0.10, 1, false}};
  for (int i = 0; i < extra; ++i) w.push_back({"batch" + std::to_string(i), 3000, 0.05, 3, false});
  return w;
}

WindowCost second(double collector) { return {1.0, 1.0, collector, 0}; }

std::size_t settleOf(const PlannerOptions& o) {
  return o.governor_settle > 0 ? o.governor_settle : std::max<std::size_t>(2, o.windows / 2);
}

// Twenty windows at 0.6 % of a 1 % budget, then a new class re-plans and the new plan costs
// 1.5 %. Judged on the sliding window, its first windows were diluted by nine cheap ones: the
// cut came six windows later and by 0.95 / 1.14 (the mixed mean). Judged on its own windows,
// it is cut once it has run a settling period, by 0.95 × 1 % / 1.5 %.
TEST(BudgetGovernor, JudgesANewPlanOnTheWindowsItRan) {
  PlannerOptions o;
  o.budget_share = 0.01;
  Planner planner(o);
  for (int w = 0; w < 20; ++w) planner.observe(classes(), second(0.006), kGovernorCosts);
  const std::size_t changes = planner.plan().changes;
  planner.observe(classes(1), second(0.006), kGovernorCosts);  // a new class: a new plan
  ASSERT_GT(planner.plan().changes, changes);
  const auto settle = static_cast<int>(settleOf(o));
  int cut_at = -1;
  for (int w = 1; w <= 2 * settle && cut_at < 0; ++w) {
    if (planner.observe(classes(1), second(0.015), kGovernorCosts).governor < 1) cut_at = w;
  }
  EXPECT_EQ(cut_at, settle);
  EXPECT_NEAR(planner.plan().governor, o.governor_aim * 0.01 / 0.015, 1e-9);
  // Under budget again: back to the whole budget within a settling period per step of at most
  // half again (0.63 -> 0.95 -> 1).
  for (int w = 0; w < 2 * settle + 1; ++w)
    planner.observe(classes(1), second(0.004), kGovernorCosts);
  EXPECT_DOUBLE_EQ(planner.plan().governor, 1.0);
}

// A new class every window re-plans every window: the governor still cuts a plan over budget
// once it has waited a whole sliding window, and raises it again the same way.
TEST(BudgetGovernor, ActsWithinTheSlidingWindowWhenPlansChangeEveryWindow) {
  PlannerOptions o;
  o.budget_share = 0.01;
  Planner planner(o);
  int extra = 0;
  planner.observe(classes(extra++), second(0.02), kGovernorCosts);
  int cut_at = -1;
  for (int w = 1; w <= 3 * static_cast<int>(o.windows) && cut_at < 0; ++w) {
    if (planner.observe(classes(extra++), second(0.02), kGovernorCosts).governor < 1) cut_at = w;
  }
  ASSERT_GT(cut_at, 0);
  EXPECT_LE(cut_at, static_cast<int>(o.windows));
  EXPECT_NEAR(planner.plan().governor, o.governor_aim * 0.5, 1e-9);  // the last windows' 2 %
  int raised_at = -1;
  for (int w = 1; w <= 3 * static_cast<int>(o.windows) && raised_at < 0; ++w) {
    if (planner.observe(classes(extra++), second(0.002), kGovernorCosts).governor >
        o.governor_aim * 0.5)
      raised_at = w;
  }
  ASSERT_GT(raised_at, 0);
  EXPECT_LE(raised_at, static_cast<int>(o.windows));
}

}  // namespace
}  // namespace perfhat::budget
