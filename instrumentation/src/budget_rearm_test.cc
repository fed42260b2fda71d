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

// What a re-arm window records: a tenth of the allowance per window the sites stood disarmed,
// shared equally among them, over each site's calls. 0.01 CPU-s/s at 10 µs a record buys 1,000
// records a second; 4 windows disarmed and the re-arm window: half a window's worth, 500 records,
// 125 for each of 4 sites; a site making 1,000 calls a second is recorded at 0.125.
TEST(BudgetRearm, AReArmWindowRecordsATenthOfTheAllowancePerWindowItStandsFor) {
  using perfhat::budget::rearmRecordProbability;
  EXPECT_DOUBLE_EQ(rearmRecordProbability(0.01, 10e-6, 4, 5, 1000), 0.125);
  // Twice the span, twice the records; past ten windows, one whole window's allowance at most.
  EXPECT_DOUBLE_EQ(rearmRecordProbability(0.01, 10e-6, 4, 10, 1000), 0.25);
  EXPECT_DOUBLE_EQ(rearmRecordProbability(0.01, 10e-6, 4, 80, 1000), 0.25);
  // A quiet site is recorded in full; one not measured yet (no calls) too.
  EXPECT_DOUBLE_EQ(rearmRecordProbability(0.01, 10e-6, 4, 5, 50), 1.0);
  EXPECT_DOUBLE_EQ(rearmRecordProbability(0.01, 10e-6, 4, 5, 0), 1.0);
  // Nothing allowed, nothing recorded (a site that made calls).
  EXPECT_DOUBLE_EQ(rearmRecordProbability(0, 10e-6, 4, 5, 1000), 0.0);
  EXPECT_DOUBLE_EQ(rearmRecordProbability(0.01, 10e-6, 0, 5, 1000), 0.0);
  // A record's weight (span / probability) stays within what the handler accepts.
  const double p = rearmRecordProbability(1e-6, 10e-6, 100, 80, 1e9);
  EXPECT_LE(80 / p, T::kMaxRecordWeight * (1 + 1e-12));
}

}  // namespace
