#include "plan/frequency_groups.h"

#include <gtest/gtest.h>

#include <numeric>

namespace perfhat::plan {
namespace {

std::vector<std::string> keys(std::size_t n) {
  std::vector<std::string> k;
  for (std::size_t i = 0; i < n; ++i) k.push_back("ns::f" + std::to_string(i) + "(int, char)");
  return k;
}

std::size_t totalBound(const std::vector<Block>& blocks) {
  std::size_t t = 0;
  for (const Block& b : blocks) t += b.bound;
  return t;
}

TEST(FrequencyGroups, QuartilesColdFirstAndColdWeightedUp) {
  auto units = keys(40);
  FrequencyProfile profile;
  for (std::size_t i = 0; i < 40; ++i) profile.counts[units[i]] = double(i * i);  // f0 coldest
  auto blocks = frequencyBlocks(units, profile, 12, 10);
  ASSERT_EQ(blocks.size(), 4u);
  EXPECT_EQ(totalBound(blocks), 12u);
  for (const Block& b : blocks) EXPECT_EQ(b.units.size(), 10u);
  EXPECT_EQ(blocks[0].units.front(), 0u);  // the coldest unit is in the first group
  EXPECT_EQ(blocks[3].units.back(), 39u);
  EXPECT_GT(blocks[0].bound, blocks[3].bound);
  // Every executed unit probed somewhere: n · bound_j ≥ executed units in group j.
  for (const Block& b : blocks) EXPECT_GE(b.bound * 10, b.units.size() - (&b == &blocks[0]));
}

// The paper made sure every unit executed in-house got a probe in some variant: 35 units, 20
// never executed; 10 variants × 4 probes. The third quartile mixes 2 unexecuted and 7 executed
// units, so it needs ⌈9/10⌉ = 1 probe per variant for all 7 to be covered.
TEST(FrequencyGroups, EveryExecutedUnitIsProbedWhenTheBoundAllows) {
  auto units = keys(35);
  FrequencyProfile profile;
  for (std::size_t i = 20; i < 35; ++i) profile.counts[units[i]] = double(i);
  auto blocks = frequencyBlocks(units, profile, 4, 10);
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    std::vector<std::uint64_t> counts(35, 0);
    PlanRng rng(seed);
    buildVariants(Strategy::kGroupedBalanced, blocks, 10, counts, rng);
    for (std::size_t i = 20; i < 35; ++i) EXPECT_GT(counts[i], 0u) << units[i] << " seed " << seed;
  }
}

TEST(FrequencyGroups, NoProfileGivesEqualShares) {
  auto blocks = frequencyBlocks(keys(8), FrequencyProfile{}, 4, 1);
  ASSERT_EQ(blocks.size(), 4u);
  for (const Block& b : blocks) EXPECT_EQ(b.bound, 1u);
}

TEST(FrequencyGroups, BoundsNeverExceedTheGroupAndSumToHBound) {
  for (std::size_t n = 1; n <= 12; ++n)
    for (std::size_t h = 1; h <= n; ++h) {
      auto units = keys(n);
      FrequencyProfile profile;
      for (std::size_t i = 0; i < n; ++i) profile.counts[units[i]] = double(i % 3);
      auto blocks = frequencyBlocks(units, profile, h, 2);
      EXPECT_EQ(totalBound(blocks), h) << n << " " << h;
      for (const Block& b : blocks) EXPECT_LE(b.bound, b.units.size());
    }
}

TEST(FrequencyGroups, ProfileFileErrors) {
  EXPECT_TRUE(parseFrequencyProfile(R"J({"a::f(int, char)": 3, "b": 0})J").ok());
  EXPECT_NE(parseFrequencyProfile("[1,2]").error.find("expected an object"), std::string::npos);
  EXPECT_NE(parseFrequencyProfile(R"({"a": -1})").error.find("\"a\""), std::string::npos);
  EXPECT_NE(parseFrequencyProfile("{").error.find("groups file"), std::string::npos);
}

}  // namespace
}  // namespace perfhat::plan
