// The release manifest `perfhat-plan variants` prints (and keeps in the history):
// {"release","strategy","seed","h_bound","units","group_bounds":[{"group","units","h"}],
//  "variants":[{"id":0,"units":[keys…]},…],"assignment":[variant of replica 0, …]}
// Variants are assigned to replicas round-robin, so each runs on ⌊N/n⌋ or ⌈N/n⌉ replicas.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "plan/variants.h"

namespace perfhat::plan {

struct ReleaseDescription {
  std::string release;
  Strategy strategy = Strategy::kGroupedBalanced;
  std::uint64_t seed = 0;
  std::size_t h_bound = 0;
  std::size_t replicas = 0;
};

nlohmann::ordered_json manifestJson(const ReleaseDescription& release,
                                    const std::vector<std::string>& units,
                                    const std::vector<Block>& blocks,
                                    const std::vector<Mask>& variants);

}  // namespace perfhat::plan
