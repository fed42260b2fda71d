#include "plan/variants.h"

#include <algorithm>
#include <numeric>
#include <utility>

namespace perfhat::plan {
namespace {

struct StrategyName {
  Strategy strategy;
  const char* name;
};
constexpr StrategyName kStrategyNames[] = {
    {Strategy::kPattern, "p"},          {Strategy::kRandom, "r"},
    {Strategy::kRandomBalanced, "rb"},  {Strategy::kGroupedBalanced, "grb"},
    {Strategy::kBalancedMemory, "rbm"}, {Strategy::kBalancedMemoryless, "rbml"},
};

Mask sorted(Mask m) {
  std::sort(m.begin(), m.end());
  return m;
}

}  // namespace

bool parseStrategy(std::string_view text, Strategy& out) {
  for (const StrategyName& s : kStrategyNames)
    if (text == s.name) {
      out = s.strategy;
      return true;
    }
  return false;
}

const char* strategyName(Strategy s) {
  for (const StrategyName& n : kStrategyNames)
    if (n.strategy == s) return n.name;
  return "?";
}

bool strategyUsesMemory(Strategy s) {
  return s == Strategy::kGroupedBalanced || s == Strategy::kBalancedMemory;
}

std::uint64_t PlanRng::below(std::uint64_t n) {
  // Rejection sampling: the largest multiple of n below 2^64 keeps every residue equally likely.
  const std::uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  std::uint64_t x;
  do {
    x = engine_();
  } while (x >= limit);
  return x % n;
}

std::vector<Mask> allocatePattern(const std::vector<std::size_t>& units, std::size_t h,
                                  std::size_t variants, PlanRng& rng) {
  std::vector<Mask> out(variants);
  if (units.empty() || h == 0) return out;
  std::size_t offset = rng.below(units.size());
  for (Mask& m : out) {
    for (std::size_t i = 0; i < h; ++i) m.push_back(units[(offset + i) % units.size()]);
    offset = (offset + h) % units.size();
    m = sorted(std::move(m));
  }
  return out;
}

std::vector<Mask> allocateRandom(const std::vector<std::size_t>& units, std::size_t h,
                                 std::size_t variants, PlanRng& rng) {
  std::vector<Mask> out(variants);
  std::vector<std::size_t> pool = units;
  for (Mask& m : out) {
    // Partial Fisher-Yates: the first h places become a uniform h-subset.
    for (std::size_t i = 0; i < h && i < pool.size(); ++i) {
      std::swap(pool[i], pool[i + rng.below(pool.size() - i)]);
      m.push_back(pool[i]);
    }
    m = sorted(std::move(m));
  }
  return out;
}

std::vector<Mask> allocateRandomBalanced(const std::vector<std::size_t>& units, std::size_t h,
                                         std::size_t variants, std::vector<std::uint64_t>& counts,
                                         PlanRng& rng) {
  std::vector<Mask> out(variants);
  h = std::min(h, units.size());
  // (count, random tie-break, unit): taking the h smallest is the paper's level-by-level choice
  // (lowest count first, uniformly within a level) with each unit at most once per variant.
  struct Candidate {
    std::uint64_t count, tie;
    std::size_t unit;
    bool operator<(const Candidate& o) const {
      return count != o.count ? count < o.count : tie < o.tie;
    }
  };
  std::vector<Candidate> candidates(units.size());
  for (Mask& m : out) {
    for (std::size_t i = 0; i < units.size(); ++i)
      candidates[i] = {counts[units[i]], rng.next(), units[i]};
    if (h < candidates.size())
      std::nth_element(candidates.begin(), candidates.begin() + h, candidates.end());
    for (std::size_t i = 0; i < h; ++i) {
      m.push_back(candidates[i].unit);
      ++counts[candidates[i].unit];
    }
    m = sorted(std::move(m));
  }
  return out;
}

std::vector<Mask> buildVariants(Strategy strategy, const std::vector<Block>& blocks,
                                std::size_t variants, std::vector<std::uint64_t>& counts,
                                PlanRng& rng) {
  std::vector<Mask> out(variants);
  for (const Block& b : blocks) {
    std::vector<Mask> part;
    switch (strategy) {
      case Strategy::kPattern:
        part = allocatePattern(b.units, b.bound, variants, rng);
        break;
      case Strategy::kRandom:
        part = allocateRandom(b.units, b.bound, variants, rng);
        break;
      default:
        part = allocateRandomBalanced(b.units, b.bound, variants, counts, rng);
        break;
    }
    for (std::size_t v = 0; v < variants; ++v)
      out[v].insert(out[v].end(), part[v].begin(), part[v].end());
  }
  for (Mask& m : out) m = sorted(std::move(m));
  return out;
}

}  // namespace perfhat::plan
