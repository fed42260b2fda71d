// Probe distribution strategies of seed 000, with the pseudo-code's two bugs fixed.
#include "plan/variants.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>

namespace perfhat::plan {
namespace {

std::vector<std::size_t> indices(std::size_t n) {
  std::vector<std::size_t> v(n);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

bool distinct(const Mask& m) {
  return std::set<std::size_t>(m.begin(), m.end()).size() == m.size();
}

TEST(RandomBalanced, NeverPlacesAUnitTwiceAndBalancesWithinOne) {
  // The extract's literal pseudo-code duplicated units in 41 of 800 variants at |U|=10, h=3, n=4.
  for (std::uint64_t seed = 0; seed < 400; ++seed) {
    PlanRng rng(seed);
    std::size_t units = 1 + rng.below(40), h = 1 + rng.below(units), n = 1 + rng.below(20);
    std::vector<std::uint64_t> counts(units, 0);
    auto variants = allocateRandomBalanced(indices(units), h, n, counts, rng);
    ASSERT_EQ(variants.size(), n);
    std::vector<std::uint64_t> seen(units, 0);
    for (const Mask& m : variants) {
      ASSERT_EQ(m.size(), h);
      ASSERT_TRUE(distinct(m)) << "seed " << seed;
      for (std::size_t u : m) ++seen[u];
    }
    EXPECT_EQ(seen, counts);
    auto [lo, hi] = std::minmax_element(counts.begin(), counts.end());
    EXPECT_LE(*hi - *lo, 1u) << "seed " << seed;
  }
}

TEST(RandomBalanced, TheExtractsDuplicateCaseHasNoDuplicates) {
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    PlanRng rng(seed);
    std::vector<std::uint64_t> counts(10, 0);
    for (const Mask& m : allocateRandomBalanced(indices(10), 3, 4, counts, rng))
      ASSERT_TRUE(distinct(m));
  }
}

TEST(RandomBalanced, EnoughSlotsProbeEveryUnit) {
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    PlanRng rng(seed);
    std::size_t units = 1 + rng.below(60), h = 1 + rng.below(units);
    std::size_t n = (units + h - 1) / h;  // the fewest variants with n·h ≥ |U|
    std::vector<std::uint64_t> counts(units, 0);
    allocateRandomBalanced(indices(units), h, n, counts, rng);
    EXPECT_EQ(std::count(counts.begin(), counts.end(), 0u), 0) << "seed " << seed;
  }
}

TEST(RandomBalanced, MemoryContinuesFromEarlierCounts) {
  // Units 0-5 were probed twice by earlier releases, 6-9 never: the next variant of 4 probes
  // takes exactly the four unprobed units, and the one after that balances the rest.
  std::vector<std::uint64_t> counts = {2, 2, 2, 2, 2, 2, 0, 0, 0, 0};
  PlanRng rng(5);
  auto variants = allocateRandomBalanced(indices(10), 4, 1, counts, rng);
  EXPECT_EQ(variants[0], (Mask{6, 7, 8, 9}));
  allocateRandomBalanced(indices(10), 4, 3, counts, rng);
  auto [lo, hi] = std::minmax_element(counts.begin(), counts.end());
  EXPECT_LE(*hi - *lo, 1u);
}

TEST(Pattern, OffsetAdvancesSoVariantsAreConsecutiveSlices) {
  for (std::uint64_t seed = 0; seed < 50; ++seed) {
    PlanRng rng(seed);
    auto variants = allocatePattern(indices(9), 3, 3, rng);
    std::set<std::size_t> all;
    for (const Mask& m : variants) {
      ASSERT_EQ(m.size(), 3u);
      all.insert(m.begin(), m.end());
    }
    EXPECT_EQ(all.size(), 9u) << "three variants of three cover nine units (Figure 1)";
  }
  // Neighbouring units, wrapping: with 10 units and h = 4 each variant starts where the last ended.
  PlanRng rng(11);
  auto variants = allocatePattern(indices(10), 4, 4, rng);
  std::vector<std::uint64_t> counts(10, 0);
  for (const Mask& m : variants)
    for (std::size_t u : m) ++counts[u];
  auto [lo, hi] = std::minmax_element(counts.begin(), counts.end());
  EXPECT_LE(*hi - *lo, 1u);  // 16 slots on 10 units, in one sweep and a bit
  for (const Mask& m : variants) {
    std::set<std::size_t> s(m.begin(), m.end());
    std::size_t contiguous_starts = 0;  // a slice of 4 on a ring has exactly one start
    for (std::size_t u : m) contiguous_starts += !s.count((u + 9) % 10);
    EXPECT_EQ(contiguous_starts, 1u);
  }
}

TEST(Random, DistinctUnitsPerVariant) {
  PlanRng rng(3);
  for (const Mask& m : allocateRandom(indices(30), 7, 50, rng)) {
    EXPECT_EQ(m.size(), 7u);
    EXPECT_TRUE(distinct(m));
  }
}

TEST(Variants, SameSeedSameVariantsOtherSeedOtherVariants) {
  for (Strategy s : {Strategy::kPattern, Strategy::kRandom, Strategy::kRandomBalanced}) {
    std::vector<Block> blocks = {{indices(200), 12}};
    std::vector<std::uint64_t> c1(200, 0), c2(200, 0), c3(200, 0);
    PlanRng a(99), b(99), c(100);
    auto va = buildVariants(s, blocks, 8, c1, a);
    EXPECT_EQ(va, buildVariants(s, blocks, 8, c2, b)) << strategyName(s);
    EXPECT_NE(va, buildVariants(s, blocks, 8, c3, c)) << strategyName(s);
  }
}

TEST(Variants, BlocksKeepTheirBounds) {
  std::vector<Block> blocks = {{{0, 1, 2, 3, 4}, 2}, {{5, 6, 7, 8, 9, 10, 11}, 1}};
  std::vector<std::uint64_t> counts(12, 0);
  PlanRng rng(1);
  for (const Mask& m : buildVariants(Strategy::kGroupedBalanced, blocks, 6, counts, rng)) {
    ASSERT_EQ(m.size(), 3u);
    EXPECT_EQ(std::count_if(m.begin(), m.end(), [](std::size_t u) { return u < 5; }), 2);
    EXPECT_TRUE(std::is_sorted(m.begin(), m.end()));
  }
  // 6 variants × 2 probes over 5 units, 6 × 1 over 7: the first group is covered, 6 of 7 in the
  // second.
  EXPECT_EQ(std::count(counts.begin(), counts.begin() + 5, 0u), 0);
  EXPECT_EQ(std::count(counts.begin() + 5, counts.end(), 0u), 1);
}

TEST(Variants, StrategyNames) {
  for (const char* name : {"p", "r", "rb", "grb", "rbm", "rbml"}) {
    Strategy s;
    ASSERT_TRUE(parseStrategy(name, s));
    EXPECT_STREQ(strategyName(s), name);
  }
  Strategy s;
  EXPECT_FALSE(parseStrategy("RB", s));
  EXPECT_TRUE(strategyUsesMemory(Strategy::kGroupedBalanced));
  EXPECT_TRUE(strategyUsesMemory(Strategy::kBalancedMemory));
  EXPECT_FALSE(strategyUsesMemory(Strategy::kBalancedMemoryless));
}

TEST(PlanRng, BelowIsInRangeAndUsesEveryValue) {
  PlanRng rng(1);
  std::vector<int> hits(7, 0);
  for (int i = 0; i < 7000; ++i) {
    std::uint64_t x = rng.below(7);
    ASSERT_LT(x, 7u);
    ++hits[x];
  }
  for (int h : hits) EXPECT_GT(h, 800);  // expected 1000 each; 800 is > 6 standard deviations off
}

}  // namespace
}  // namespace perfhat::plan
