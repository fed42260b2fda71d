#include "plan/manifest.h"

namespace perfhat::plan {

nlohmann::ordered_json manifestJson(const ReleaseDescription& release,
                                    const std::vector<std::string>& units,
                                    const std::vector<Block>& blocks,
                                    const std::vector<Mask>& variants) {
  nlohmann::ordered_json groups = nlohmann::ordered_json::array();
  for (std::size_t j = 0; j < blocks.size(); ++j)
    groups.push_back({{"group", j}, {"units", blocks[j].units.size()}, {"h", blocks[j].bound}});
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (std::size_t v = 0; v < variants.size(); ++v) {
    nlohmann::ordered_json keys = nlohmann::ordered_json::array();
    for (std::size_t u : variants[v]) keys.push_back(units[u]);
    list.push_back({{"id", v}, {"units", std::move(keys)}});
  }
  nlohmann::ordered_json assignment = nlohmann::ordered_json::array();
  for (std::size_t r = 0; r < release.replicas; ++r) assignment.push_back(r % variants.size());
  return {{"release", release.release}, {"strategy", strategyName(release.strategy)},
          {"seed", release.seed},       {"h_bound", release.h_bound},
          {"units", units.size()},      {"group_bounds", groups},
          {"variants", list},           {"assignment", assignment}};
}

}  // namespace perfhat::plan
