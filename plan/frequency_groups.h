// Groups for Grouped Random Balanced (seed 000, RQ2): units split into frequency quartiles from
// an in-house or production profile, the cold groups given more of each variant's h_bound.
// Profile file (--groups): a JSON object {"function key": execution count, …}; units missing
// from it count as never executed.
// The paper does not give its weight formula; this is the extract's proposal:
//   raw_j = |G_j| / (1 + share_j / mean share),  share_j = group's share of all executions,
//   bound_j = h_bound · raw_j / Σ raw (largest remainder, capped at |G_j|), then every group
//   with executed units gets at least ⌈|G_j| / n⌉ (moved from the group with the most to spare)
//   so each of its units is probed in some variant, when h_bound allows.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "plan/variants.h"

namespace perfhat::plan {

inline constexpr std::size_t kMaxProfileBytes = 64 << 20;
inline constexpr std::size_t kFrequencyGroups = 4;

struct FrequencyProfile {
  std::unordered_map<std::string, double> counts;
  std::string error;
  bool ok() const { return error.empty(); }
};

FrequencyProfile parseFrequencyProfile(std::string_view text);
FrequencyProfile readFrequencyProfile(const std::string& path);

// Blocks in order coldest first. Precondition: 0 < h_bound ≤ units.size(), variants > 0.
std::vector<Block> frequencyBlocks(const std::vector<std::string>& units,
                                   const FrequencyProfile& profile, std::size_t h_bound,
                                   std::size_t variants);

}  // namespace perfhat::plan
