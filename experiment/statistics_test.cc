// Unit checks with values known by hand or published; experiment/scipy_compare_test.py checks
// every statistic against SciPy on many more data sets.
#include "experiment/statistics.h"

#include <gtest/gtest.h>

namespace perfhat::experiment {
namespace {

TEST(ExperimentStatistics, DescribeUsesSampleStandardDeviation) {
  const Descriptives d = describe({2, 4, 4, 4, 5, 5, 7, 9});
  EXPECT_EQ(d.n, 8u);
  EXPECT_DOUBLE_EQ(d.mean, 5);
  EXPECT_NEAR(d.sd, 2.138089935, 1e-9);  // sqrt(32 / 7)
}

TEST(ExperimentStatistics, AverageRanksShareTies) {
  EXPECT_EQ(averageRanks({10, 20, 10, 30}), (std::vector<double>{1.5, 3, 1.5, 4}));
}

TEST(ExperimentStatistics, MannWhitneyExactForSmallSamplesWithoutTies) {
  // Full separation of 3 vs 3: P(U >= 9) = 1 / C(6, 3) = 1/20, two-sided 0.1.
  const MannWhitneyResult r = mannWhitneyU({1, 2, 3}, {4, 5, 6});
  EXPECT_TRUE(r.exact);
  EXPECT_DOUBLE_EQ(r.u, 0);
  EXPECT_NEAR(r.p, 0.1, 1e-12);
  EXPECT_DOUBLE_EQ(mannWhitneyU({4, 5, 6}, {1, 2, 3}).u, 9);  // U of the first sample
}

TEST(ExperimentStatistics, MannWhitneyNormalApproximationWithTies) {
  const MannWhitneyResult r = mannWhitneyU({1, 2, 2, 3}, {2, 4, 5});
  EXPECT_FALSE(r.exact);
  EXPECT_DOUBLE_EQ(r.u, 2);
  EXPECT_NEAR(r.p, 0.19908985214820463, 1e-9);  // scipy.stats.mannwhitneyu 1.10
}

TEST(ExperimentStatistics, MannWhitneyExactWhenOneSampleIsLarge) {
  std::vector<double> big;
  for (int i = 0; i < 2000; ++i) big.push_back(i + 0.5);
  const MannWhitneyResult r = mannWhitneyU({-3, -2, -1}, big);
  EXPECT_TRUE(r.exact);
  // P(all three below all 2000) = 1 / C(2003, 3), two-sided: twice that.
  EXPECT_NEAR(r.p, 2.0 / (2003.0 * 2002.0 * 2001.0 / 6.0), 1e-15);
}

TEST(ExperimentStatistics, ShapiroWilkMatchesPublishedValues) {
  // The example of Shapiro & Wilk (1965), heights: W = 0.789 (SciPy: 0.78881, p = 0.0067).
  const ShapiroResult r = shapiroWilk({148, 154, 158, 160, 161, 162, 166, 170, 182, 195, 236});
  EXPECT_NEAR(r.w, 0.7888147830963135, 1e-7);
  EXPECT_NEAR(r.p, 0.006703833118081093, 1e-7);
  const ShapiroResult small = shapiroWilk({2.1, 3.4, 1.9, 5.6, 4.4, 3.3, 2.8});
  EXPECT_NEAR(small.w, 0.9401367902755737, 1e-7);
  EXPECT_NEAR(small.p, 0.6399518847465515, 1e-7);
  EXPECT_THROW(shapiroWilk({1, 2}), std::invalid_argument);
}

TEST(ExperimentStatistics, CliffsDeltaAndA12) {
  const EffectSize all_below = effectSize({1, 2, 3}, {4, 5, 6});
  EXPECT_DOUBLE_EQ(all_below.cliffs_delta, -1);
  EXPECT_EQ(all_below.magnitude, "large");
  EXPECT_DOUBLE_EQ(all_below.a12, 0);
  // Pairs: 1 vs {1,2}: one tie, one less; 3 vs {1,2}: two greater -> (2 - 1) / 4, A12 = 2.5/4.
  const EffectSize mixed = effectSize({1, 3}, {1, 2});
  EXPECT_DOUBLE_EQ(mixed.cliffs_delta, 0.25);
  EXPECT_EQ(mixed.magnitude, "small");
  EXPECT_DOUBLE_EQ(mixed.a12, 0.625);
  EXPECT_EQ(effectSize({1, 2}, {1, 2}).magnitude, "negligible");
  // 1..10 against the same shifted down by 2: 44 greater, 8 less of 100 pairs -> 0.36.
  const EffectSize shifted =
      effectSize({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, {-1, 0, 1, 2, 3, 4, 5, 6, 7, 8});
  EXPECT_NEAR(shifted.cliffs_delta, 0.36, 1e-12);
  EXPECT_EQ(shifted.magnitude, "medium");
}

}  // namespace
}  // namespace perfhat::experiment
