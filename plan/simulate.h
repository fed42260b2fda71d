// Replaying full traces through a release's variant masks (seed 000's simulation): every site
// (replica) ran with every probe; a technique keeps what its masks would have seen, and the
// paper's award functions compare it with Full.
//   coverage      100·|units seen by the technique| / |units executed|
//   top_hotspots  100·|top-K under the technique ∩ top-K under Full| / K, K = p % of |U|
//                 (counts summed over sites; ties: larger count first, then key order).
//                 top_hotspots_normalised divides each unit's count by its exposure (the share
//                 of sites whose variant probes it), the bias the paper leaves open.
//   overhead      100·probe executions under the technique / probe executions under Full
// Dynamic is Bug-Isolation sampling as the paper simulated it: after each picked record a
// uniform skip i in [0, max_skip] is drawn and the (i+1)-th next record is picked (effective rate
// about 1/50.5 at the paper's 0–99). Dynamic+variants samples each site's masked stream.
// The overhead_light/medium/heavy figures charge the sampling logic k = 10, 1, 0.1 times a probe
// per sampled event, the extract's reconstruction of the paper's cost scenarios.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

namespace perfhat::plan {

// Distinct function keys a simulation keeps counts for (memory stays bounded on any trace).
inline constexpr std::size_t kMaxSimulatedUnits = 20'000'000;

struct ManifestMasks {
  std::size_t inventory_units = 0;                 // |U| of the release
  std::vector<std::vector<std::string>> variants;  // unit keys per variant
  std::vector<std::size_t> assignment;             // replica → variant
};

struct TechniqueScore {
  std::string name;
  double coverage = 0, top_hotspots = 0, top_hotspots_normalised = 0, overhead = 0;
  bool sampled = false;  // Dynamic techniques: report the cost scenarios too
};

struct SimulationResult {
  std::uint64_t records = 0;
  std::size_t sites = 0, units_executed = 0, hot_k = 0;
  std::vector<TechniqueScore> techniques;  // variants, dynamic, dynamic+variants
};

class Simulator {
 public:
  // `skip` draws the gap before the next sampled record (the default: uniform in [0, max_skip]).
  Simulator(const ManifestMasks& masks, double top_percent, std::function<std::uint64_t()> skip);

  // One call record of `site` (a replica of the manifest's assignment). Returns "" or the error.
  std::string record(std::size_t site, std::string_view key);
  SimulationResult finish() const;

 private:
  struct Site {
    std::size_t variant = 0;
    bool seen = false;
    std::uint64_t full_countdown = 0, masked_countdown = 0;  // records left before the next pick
  };
  std::size_t unitIndex(std::string_view key);
  bool probed(std::size_t variant, std::size_t unit) const;

  std::size_t manifest_units_ = 0;               // keys of the masks: indices [0, manifest_units_)
  std::vector<std::vector<std::size_t>> masks_;  // per variant: unit indices, ascending
  std::vector<Site> sites_;
  double top_percent_;
  std::size_t inventory_units_;
  std::function<std::uint64_t()> skip_;
  // Looked up by string_view: no allocation per trace record.
  struct KeyHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view k) const { return std::hash<std::string_view>{}(k); }
  };
  std::unordered_map<std::string, std::size_t, KeyHash, std::equal_to<>> index_;
  std::vector<std::string> keys_;
  std::vector<std::uint64_t> full_, masked_, dynamic_, dynamic_masked_;
  std::uint64_t records_ = 0;
};

nlohmann::ordered_json simulationJson(const SimulationResult& result);

// The manifest JSON of `perfhat-plan variants`. Returns "" or the error.
std::string parseManifestMasks(std::string_view text, ManifestMasks& out);

}  // namespace perfhat::plan
