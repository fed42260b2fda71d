// Probing mode's re-arm schedule (budget_rearm.h): untraced classes are measured again every
// kFirstEvery windows at first, twice as late each time their rates hold still (up to kMaxEvery),
// and kFirstEvery windows after a re-arm that finds them moved.
#include "budget_rearm.h"

#include <gtest/gtest.h>

#include <vector>

namespace {

using perfhat::budget::RearmSchedule;
using T = perfhat::budget::RearmTunables;

// The windows in [from, to] at which the schedule re-arms.
std::vector<std::size_t> armed(RearmSchedule& r, std::size_t from, std::size_t to) {
  std::vector<std::size_t> out;
  for (std::size_t w = from; w <= to; ++w)
    if (r.arm(w)) out.push_back(w);
  return out;
}

// The first window from `from` on that re-arms (0: none within kMaxEvery).
std::size_t next_armed(RearmSchedule& r, std::size_t from) {
  for (std::size_t w = from; w <= from + T::kMaxEvery; ++w)
    if (r.arm(w)) return w;
  return 0;
}

TEST(BudgetRearm, TheFirstReArmComesAfterTheFirstInterval) {
  RearmSchedule r;
  EXPECT_TRUE(armed(r, 1, T::kFirstEvery - 1).empty());
  EXPECT_TRUE(r.arm(T::kFirstEvery));
  EXPECT_FALSE(r.arm(T::kFirstEvery + 1));  // once per interval
}

TEST(BudgetRearm, StableRatesDoubleTheIntervalUpToTheCeiling) {
  RearmSchedule r;
  std::size_t w = T::kFirstEvery;
  ASSERT_TRUE(r.arm(w));
  r.measured({{"a", 1000}, {"b", 40}});  // the first measurement: nothing to compare with
  EXPECT_EQ(r.every(), T::kFirstEvery);
  std::size_t expect = T::kFirstEvery;
  for (int i = 0; i < 6; ++i) {
    const std::size_t every = r.every();
    const std::size_t next = next_armed(r, w + 1);
    EXPECT_EQ(next, w + every) << "re-arm " << i;
    w = next;
    // Within kStableChange of the last measurement, each time.
    const double wobble = i % 2 ? 1.1 : 0.95;
    r.measured({{"a", 1000 * wobble}, {"b", 40 / wobble}});
    expect = std::min(expect * 2, T::kMaxEvery);
    EXPECT_EQ(r.every(), expect) << "after re-arm " << i;
  }
  EXPECT_EQ(r.every(), T::kMaxEvery);
}

TEST(BudgetRearm, AMovedRateBringsTheNextReArmBackToTheFirstInterval) {
  RearmSchedule r;
  ASSERT_TRUE(r.arm(T::kFirstEvery));
  r.measured({{"a", 1000}});
  ASSERT_TRUE(r.arm(2 * T::kFirstEvery));
  r.measured({{"a", 1000}});
  ASSERT_EQ(r.every(), 2 * T::kFirstEvery);
  ASSERT_TRUE(r.arm(4 * T::kFirstEvery));
  r.measured({{"a", 1000 * (1 + 2 * T::kStableChange)}});
  EXPECT_EQ(r.every(), T::kFirstEvery);
  EXPECT_FALSE(r.arm(5 * T::kFirstEvery - 1));
  EXPECT_TRUE(r.arm(5 * T::kFirstEvery));
}

TEST(BudgetRearm, ANewOrVanishedClassIsAChange) {
  RearmSchedule r;
  ASSERT_TRUE(r.arm(T::kFirstEvery));
  r.measured({{"a", 1000}});
  ASSERT_TRUE(r.arm(2 * T::kFirstEvery));
  r.measured({{"a", 1000}, {"b", 500}});
  EXPECT_EQ(r.every(), T::kFirstEvery);
  ASSERT_TRUE(r.arm(3 * T::kFirstEvery));
  r.measured({{"b", 500}});
  EXPECT_EQ(r.every(), T::kFirstEvery);
}

TEST(BudgetRearm, QuietClassesAreStableWhateverTheirRatio) {
  RearmSchedule r;
  ASSERT_TRUE(r.arm(T::kFirstEvery));
  r.measured({{"a", 0.1 * T::kQuietHz}});
  ASSERT_TRUE(r.arm(2 * T::kFirstEvery));
  r.measured({{"a", 0.9 * T::kQuietHz}});
  EXPECT_EQ(r.every(), 2 * T::kFirstEvery);
}

}  // namespace
