#include "feedback-handler/dynamic/hill.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace perfhat::handler::dynamic {
namespace {

// n draws of a Pareto(α, x_min = 1) variable by inversion: X = U^(−1/α).
std::vector<double> pareto(double alpha, size_t n, uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<double> v(n);
  for (double& x : v) x = std::pow(1.0 - u(rng), -1.0 / alpha);
  return v;
}

TEST(Hill, CurveMatchesTheDefinitionByHand) {
  // Sorted: 8, 4, 2, 1. H(1) = ln 8 − ln 4 = ln 2; H(2) = (ln 8 + ln 4)/2 − ln 2 = 1.5 ln 2.
  const HillCurve c = hillCurve({2, 8, 1, 4, 0, -3});
  ASSERT_EQ(c.alpha.size(), 3u);  // 0 and −3 are left out
  EXPECT_NEAR(c.alpha[0], 1 / std::log(2.0), 1e-12);
  EXPECT_NEAR(c.alpha[1], 1 / (1.5 * std::log(2.0)), 1e-12);
  EXPECT_NEAR(c.alpha[2], 1 / ((std::log(8.0) + std::log(4.0) + std::log(2.0)) / 3), 1e-12);
}

class HillPareto : public ::testing::TestWithParam<double> {};

TEST_P(HillPareto, RecoversAlphaWithinTenPercentInTheStableRange) {
  const double alpha = GetParam();
  for (uint32_t seed : {1u, 2u, 3u}) {
    const std::vector<double> v = pareto(alpha, 20000, seed);
    const auto e = hillEstimate(v);
    ASSERT_TRUE(e.has_value()) << "seed " << seed;
    EXPECT_NEAR(e->alpha, alpha, 0.1 * alpha) << "seed " << seed;
    EXPECT_GE(e->k_to - e->k_from + 1, 250u) << "seed " << seed;
    const HillCurve c = hillCurve(v);
    for (size_t k = e->k_from; k <= e->k_to; ++k) {
      EXPECT_NEAR(c.alpha[k - 1], alpha, 0.1 * alpha) << "k " << k << " seed " << seed;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(SeedAlphas, HillPareto, ::testing::Values(0.65, 1.5));

TEST(Hill, TooFewValuesOrNoTailGiveNoEstimate) {
  EXPECT_FALSE(hillEstimate({5, 4, 3}).has_value());
  // All equal: H(k) = 0 everywhere, α̂ undefined: never stable.
  EXPECT_FALSE(hillEstimate(std::vector<double>(100, 7.0)).has_value());
}

}  // namespace
}  // namespace perfhat::handler::dynamic
