// perfhat-plan calibrate: measures the benchmark without probes, then with k random units probed
// for the k the bisection asks, and prints the h_bound that met the target.
#include <unistd.h>
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>

#include "plan/calibrate.h"
#include "plan/commands.h"
#include "plan/units_file.h"

namespace perfhat::plan {
namespace {

int fail(const std::string& message) {
  std::fprintf(stderr, "perfhat-plan calibrate: %s\n", message.c_str());
  return 2;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

int runCalibrate(const CalibrateOptions& o) {
  if (!(o.target_overhead > 0 && o.target_overhead < 100)) {
    return fail("--target-overhead must be a share in (0, 100), e.g. 0.05 for 5 %");
  }
  if (o.repetitions == 0 || o.repetitions > 1000) return fail("--repetitions must be in [1, 1000]");
  if (o.command.empty()) return fail("give the benchmark command after --");
  UnitsFile inventory = readUnitsFile(o.units_path);
  if (!inventory.ok()) return fail(inventory.error);
  const std::vector<std::string>& units = inventory.units;
  if (units.empty()) return fail(o.units_path + " lists no units");

  const std::uint64_t seed = o.seed.value_or(std::random_device{}());
  std::mt19937_64 rng(seed);
  const std::string manifest = (o.work_dir.empty() ? std::string("/tmp") : o.work_dir) +
                               "/perfhat-calibrate-" + std::to_string(::getpid()) + ".json";
  nlohmann::ordered_json out;
  try {
    auto run = [&](const std::vector<std::pair<std::string, std::string>>& env) {
      std::vector<double> cpu;
      for (std::size_t r = 0; r < o.repetitions; ++r) {
        cpu.push_back(cpuSecondsOf(o.command, env, o.timeout_s));
      }
      return median(cpu);
    };
    // Without probes: the same binary with perfhat disabled (or the --baseline command).
    const double base = o.baseline_command.empty() ? run({{"PERFHAT_ENABLED", "0"}}) : [&] {
      std::vector<double> cpu;
      for (std::size_t r = 0; r < o.repetitions; ++r) {
        cpu.push_back(cpuSecondsOf(o.baseline_command, {}, o.timeout_s));
      }
      return median(cpu);
    }();
    if (base <= 0) return fail("the run without probes took no measurable CPU time");
    std::vector<std::string> shuffled = units;
    auto overhead = [&](std::size_t h) {
      std::shuffle(shuffled.begin(), shuffled.end(), rng);  // k random units, drawn anew
      std::ofstream(manifest) << singleVariantManifest(
          std::vector<std::string>(shuffled.begin(), shuffled.begin() + h));
      const double cpu = run({{"PERFHAT_VARIANT_MANIFEST", manifest},
                              {"PERFHAT_VARIANT", "0"},
                              {"PERFHAT_ENABLED", "1"}});
      return cpu / base - 1;
    };
    // Every probe masked: what the masks themselves cost (the bisection's floor).
    out["masked_floor_overhead"] = overhead(0);
    Calibration c = bisectBound(units.size(), o.target_overhead, overhead);
    std::remove(manifest.c_str());
    out["target_overhead"] = o.target_overhead;
    out["h_bound"] = c.h_bound;
    out["units"] = units.size();
    out["share_of_units"] = static_cast<double>(c.h_bound) / static_cast<double>(units.size());
    out["baseline_cpu_s"] = base;
    out["repetitions"] = o.repetitions;
    out["seed"] = seed;
    nlohmann::json steps = nlohmann::json::array();
    for (const auto& s : c.steps) steps.push_back({{"h", s.h}, {"overhead", s.overhead}});
    out["steps"] = std::move(steps);
  } catch (const std::exception& e) {
    std::remove(manifest.c_str());
    return fail(e.what());
  }
  std::cout << out.dump(2) << "\n";
  return 0;
}

}  // namespace perfhat::plan
