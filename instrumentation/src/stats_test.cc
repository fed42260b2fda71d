#include "stats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace perfhat::stats {
namespace {

TEST(InstrStats, NormalQuantileMatchesKnownValues) {
  EXPECT_NEAR(normal_quantile(0.975), 1.959964, 1e-6);
  EXPECT_NEAR(normal_quantile(0.5), 0.0, 1e-12);
  EXPECT_NEAR(normal_quantile(0.01), -2.326348, 1e-6);
  EXPECT_NEAR(z_critical(0.95), 1.959964, 1e-6);
}

TEST(InstrStats, StudentTMatchesTables) {
  // t_{0.975, df=6} = 2.446912; t_{0.975, df=3} = 3.182446.
  EXPECT_NEAR(student_t_two_sided_p(2.446912, 6), 0.05, 1e-5);
  EXPECT_NEAR(student_t_two_sided_p(3.182446, 3), 0.05, 1e-5);
  EXPECT_NEAR(student_t_cdf(0, 5), 0.5, 1e-12);
}

TEST(InstrStats, WelfordMergeEqualsSequential) {
  Welford a, b, all;
  for (int i = 0; i < 10; ++i) {
    a.add(i * 1.5);
    all.add(i * 1.5);
  }
  for (int i = 0; i < 7; ++i) {
    b.add(100 - i);
    all.add(100 - i);
  }
  a.merge(b);
  EXPECT_EQ(a.n, all.n);
  EXPECT_NEAR(a.mean, all.mean, 1e-9);
  EXPECT_NEAR(a.variance(), all.variance(), 1e-9);
}

TEST(InstrStats, KsAcceptsNormalRejectsSkewed) {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> nd(10, 2);
  std::exponential_distribution<double> ed(1.0);
  std::vector<double> normal, skewed;
  for (int i = 0; i < 400; ++i) {
    normal.push_back(nd(rng));
    skewed.push_back(std::pow(ed(rng), 3));
  }
  EXPECT_GT(ks_normality_p(normal), 0.05);
  EXPECT_LT(ks_normality_p(skewed), 0.05);
  EXPECT_EQ(ks_normality_p({1, 1, 1, 1}), 0);
}

TEST(InstrStats, QuantileType7) {
  EXPECT_DOUBLE_EQ(quantile({2, 12, 50, 100, 200}, 0.25), 12);
  EXPECT_DOUBLE_EQ(quantile({2, 12, 50, 100, 200}, 0.75), 100);
  EXPECT_DOUBLE_EQ(median({1, 2, 3, 4}), 2.5);
}

}  // namespace
}  // namespace perfhat::stats
