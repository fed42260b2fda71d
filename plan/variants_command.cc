// perfhat-plan variants: reads the inventory (and groups, history), builds the release, keeps it
// in the history and prints the manifest.
#include <cstdio>
#include <iostream>
#include <numeric>
#include <random>

#include "plan/commands.h"
#include "plan/frequency_groups.h"
#include "plan/manifest.h"
#include "plan/release_history.h"
#include "plan/units_file.h"
#include "plan/variants.h"

namespace perfhat::plan {
namespace {

// A manifest holds n·h_bound keys; beyond this it would not fit in memory comfortably.
constexpr std::size_t kMaxProbeSlots = 50'000'000;
constexpr std::size_t kMaxReplicas = 1'000'000;
// Balanced strategies look at every unit for every variant: bounded time on any input.
constexpr std::size_t kMaxVariantUnitWork = 2'000'000'000;

int fail(const std::string& message) {
  std::fprintf(stderr, "perfhat-plan variants: %s\n", message.c_str());
  return 2;
}

std::uint64_t freshSeed() {
  std::random_device device;
  return (std::uint64_t{device()} << 32) ^ device();
}

}  // namespace

int runVariants(const VariantsOptions& o) {
  Strategy strategy;
  if (!parseStrategy(o.strategy, strategy))
    return fail("unknown --strategy '" + o.strategy + "' (p, r, rb, grb, rbm or rbml)");
  if (o.h_bound == 0) return fail("--h-bound must be at least 1");
  if (o.variants == 0) return fail("--variants must be at least 1");
  if (o.variants > kMaxProbeSlots / o.h_bound)
    return fail("--variants × --h-bound is more than " + std::to_string(kMaxProbeSlots) +
                " probes");
  std::size_t replicas = o.replicas.value_or(o.variants);
  if (replicas == 0 || replicas > kMaxReplicas)
    return fail("--replicas must be in [1, " + std::to_string(kMaxReplicas) + "]");
  if (!o.groups_path.empty() && strategy != Strategy::kGroupedBalanced)
    return fail("--groups applies to --strategy grb only");
  if (strategy == Strategy::kBalancedMemory && o.history_dir.empty())
    return fail("--strategy rbm continues the counts of a history: give --history DIR");
  if (!o.release.empty() && !validReleaseId(o.release))
    return fail("--release must be 1-64 letters, digits, '.', '_' or '-', not starting with '.'");

  UnitsFile inventory = readUnitsFile(o.units_path);
  if (!inventory.ok()) return fail(inventory.error);
  const std::vector<std::string>& units = inventory.units;
  if (o.h_bound > units.size())
    return fail("--h-bound " + std::to_string(o.h_bound) + " is more than the " +
                std::to_string(units.size()) + " units of " + o.units_path);

  if (o.variants > kMaxVariantUnitWork / units.size())
    return fail("--variants × units is more than " + std::to_string(kMaxVariantUnitWork) + " (" +
                std::to_string(o.variants) + " × " + std::to_string(units.size()) + ")");

  History history;
  history.counts.assign(units.size(), 0);
  if (!o.history_dir.empty()) {
    history = readHistory(o.history_dir, units);
    if (!history.ok()) return fail(history.error);
  }
  std::vector<Block> blocks;
  if (!o.groups_path.empty()) {
    FrequencyProfile profile = readFrequencyProfile(o.groups_path);
    if (!profile.ok()) return fail(profile.error);
    blocks = frequencyBlocks(units, profile, o.h_bound, o.variants);
  } else {
    Block all;
    all.units.resize(units.size());
    std::iota(all.units.begin(), all.units.end(), 0);
    all.bound = o.h_bound;
    blocks.push_back(std::move(all));
  }

  ReleaseDescription release;
  release.release = o.release.empty() ? nextReleaseId(history) : o.release;
  release.strategy = strategy;
  release.seed = o.seed.value_or(freshSeed());
  release.h_bound = o.h_bound;
  release.replicas = replicas;
  std::vector<std::uint64_t> counts(units.size(), 0);
  if (strategyUsesMemory(strategy)) counts = history.counts;
  PlanRng rng(release.seed);
  std::vector<Mask> variants = buildVariants(strategy, blocks, o.variants, counts, rng);
  nlohmann::ordered_json manifest = manifestJson(release, units, blocks, variants);
  if (!o.history_dir.empty()) {
    if (std::string e = appendRelease(o.history_dir, release.release, manifest); !e.empty())
      return fail(e);
  }
  std::cout << manifest.dump(2) << '\n';
  return 0;
}

}  // namespace perfhat::plan
