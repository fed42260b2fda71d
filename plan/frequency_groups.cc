#include "plan/frequency_groups.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "common/json_parse.h"
#include "plan/bounded_file.h"

namespace perfhat::plan {

FrequencyProfile parseFrequencyProfile(std::string_view text) {
  FrequencyProfile r;
  JsonParse parsed = parseJson(text, 4);
  if (!parsed.ok()) {
    r.error = "groups file: " + parsed.error;
    return r;
  }
  if (!parsed.value.is_object()) {
    r.error = "groups file: expected an object {\"function key\": execution count, ...}";
    return r;
  }
  for (const auto& [key, value] : parsed.value.items()) {
    if (!value.is_number() || !std::isfinite(value.get<double>()) || value.get<double>() < 0) {
      r.error = "groups file: \"" + key + "\": the execution count must be a number >= 0";
      r.counts.clear();
      return r;
    }
    r.counts[key] = value.get<double>();
  }
  return r;
}

FrequencyProfile readFrequencyProfile(const std::string& path) {
  return parseBoundedFile(path, kMaxProfileBytes, parseFrequencyProfile);
}

std::vector<Block> frequencyBlocks(const std::vector<std::string>& units,
                                   const FrequencyProfile& profile, std::size_t h_bound,
                                   std::size_t variants) {
  std::vector<double> count(units.size(), 0.0);
  for (std::size_t i = 0; i < units.size(); ++i)
    if (auto it = profile.counts.find(units[i]); it != profile.counts.end()) count[i] = it->second;
  std::vector<std::size_t> order(units.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return count[a] < count[b]; });

  // Quartiles by rank: contiguous slices of the sorted units, sizes differing by at most one.
  const std::size_t q = std::min(kFrequencyGroups, units.size());
  std::vector<Block> blocks(q);
  for (std::size_t r = 0; r < order.size(); ++r)
    blocks[r * q / order.size()].units.push_back(order[r]);
  for (Block& b : blocks) std::sort(b.units.begin(), b.units.end());  // inventory order

  double total = std::accumulate(count.begin(), count.end(), 0.0);
  std::vector<double> raw(q);
  std::vector<std::size_t> executed(q, 0);
  for (std::size_t j = 0; j < q; ++j) {
    double sum = 0;
    for (std::size_t u : blocks[j].units) {
      sum += count[u];
      executed[j] += count[u] > 0;
    }
    double share = total > 0 ? sum / total : 1.0 / q;
    raw[j] = blocks[j].units.size() / (1.0 + share * q);
  }
  double raw_sum = std::accumulate(raw.begin(), raw.end(), 0.0);
  std::vector<double> ideal(q);
  std::size_t given = 0;
  for (std::size_t j = 0; j < q; ++j) {
    ideal[j] = h_bound * raw[j] / raw_sum;
    blocks[j].bound = std::min(blocks[j].units.size(), static_cast<std::size_t>(ideal[j]));
    given += blocks[j].bound;
  }
  // Largest remainder first; a full group passes its share on.
  while (given < h_bound) {
    std::size_t pick = q;
    for (std::size_t j = 0; j < q; ++j) {
      if (blocks[j].bound >= blocks[j].units.size()) continue;
      if (pick == q || ideal[j] - blocks[j].bound > ideal[pick] - blocks[pick].bound) pick = j;
    }
    if (pick == q) break;  // every unit in every variant: h_bound ≥ |U|
    ++blocks[pick].bound;
    ++given;
  }
  // Every group with executed units probes each of its units in some variant if the bound allows
  // (RB spreads a group's probes over all its units, executed or not, so the whole group counts).
  auto need = [&](std::size_t j) -> std::size_t {
    return executed[j] ? (blocks[j].units.size() + variants - 1) / variants : 0;
  };
  for (std::size_t j = 0; j < q; ++j) {
    while (blocks[j].bound < std::min(need(j), blocks[j].units.size())) {
      std::size_t donor = q;
      for (std::size_t k = 0; k < q; ++k) {
        if (k == j || blocks[k].bound <= need(k)) continue;
        // Ties go to the hotter group (later): cold groups keep their probes.
        if (donor == q || blocks[k].bound - need(k) >= blocks[donor].bound - need(donor)) donor = k;
      }
      if (donor == q) break;
      --blocks[donor].bound;
      ++blocks[j].bound;
    }
  }
  return blocks;
}

}  // namespace perfhat::plan
