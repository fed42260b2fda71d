// The allocation history of `perfhat-plan variants --history DIR`: every release's manifest kept
// as DIR/release-<id>.json. RBM continues its per-unit probe counts from all of them (the
// paper's "memory"); a new release is added without touching the earlier ones.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace perfhat::plan {

inline constexpr std::size_t kMaxManifestBytes = 256 << 20;

// A release id (common/release_id.h) that is also a file name: not starting with '.'.
bool validReleaseId(std::string_view id);

struct History {
  std::vector<std::string> releases;  // ids found, sorted
  std::vector<std::uint64_t> counts;  // per unit of the inventory: variants that probed it
  std::string error;
  bool ok() const { return error.empty(); }
};

// A missing DIR is an empty history. Units of earlier releases no longer in the inventory are
// ignored; new units start at zero.
History readHistory(const std::string& dir, const std::vector<std::string>& units);

// The next free numeric id ("1", "2", …) after the releases already kept.
std::string nextReleaseId(const History& history);

// Writes DIR/release-<id>.json (creating DIR) through a temporary file and a link; refuses an
// id that is already kept. Returns "" or the error.
std::string appendRelease(const std::string& dir, const std::string& id,
                          const nlohmann::ordered_json& manifest);

}  // namespace perfhat::plan
