// Probe distribution across program variants (Diep, Elbaum, Cohen, seed 000): each of n variants
// gets at most h_bound of the units U, chosen so that together they see as much as possible.
// Units are indices into the inventory; a block is one group of units with its own bound.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace perfhat::plan {

enum class Strategy {
  kPattern,             // p:    neighbouring units, the offset advancing variant by variant
  kRandom,              // r:    h distinct units uniformly at random, variants independent
  kRandomBalanced,      // rb:   random among the least-probed units (counts from zero)
  kGroupedBalanced,     // grb:  rb inside frequency groups, counts continued from the history
  kBalancedMemory,      // rbm:  rb with counts continued from the history
  kBalancedMemoryless,  // rbml: rb with counts from zero even when a history exists
};

bool parseStrategy(std::string_view text, Strategy& out);
const char* strategyName(Strategy s);
bool strategyUsesMemory(Strategy s);

// Uniform choices from a std::mt19937_64 stream (whose output the standard fixes), so a seed gives
// the same manifest with every standard library.
class PlanRng {
 public:
  explicit PlanRng(std::uint64_t seed) : engine_(seed) {}
  std::uint64_t next() { return engine_(); }
  std::uint64_t below(std::uint64_t n);  // uniform in [0, n), n > 0

 private:
  std::mt19937_64 engine_;
};

using Mask = std::vector<std::size_t>;  // unit indices of one variant, ascending

// Algorithm 2 with the offset advancing by h after each variant (the paper's pseudo-code never
// moves it, which would give every variant the same units). Precondition: h ≤ |units|.
std::vector<Mask> allocatePattern(const std::vector<std::size_t>& units, std::size_t h,
                                  std::size_t variants, PlanRng& rng);

// Algorithm 3: h distinct units per variant, uniformly, independently of other variants.
std::vector<Mask> allocateRandom(const std::vector<std::size_t>& units, std::size_t h,
                                 std::size_t variants, PlanRng& rng);

// Algorithm 4, corrected: each variant takes the h units with the fewest probes so far (ties
// broken at random) and never one unit twice; `counts` (indexed by unit, as in the inventory)
// carries the per-unit probe counts in (history, for memory) and out.
std::vector<Mask> allocateRandomBalanced(const std::vector<std::size_t>& units, std::size_t h,
                                         std::size_t variants, std::vector<std::uint64_t>& counts,
                                         PlanRng& rng);

// One group of units and its per-variant bound g_j·h_bound.
struct Block {
  std::vector<std::size_t> units;
  std::size_t bound = 0;
};

// Algorithm 1: allocate every block with the strategy and re-assemble the variants.
// `counts` is used (and updated) by the balanced strategies.
std::vector<Mask> buildVariants(Strategy strategy, const std::vector<Block>& blocks,
                                std::size_t variants, std::vector<std::uint64_t>& counts,
                                PlanRng& rng);

}  // namespace perfhat::plan
