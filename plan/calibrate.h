// perfhat-plan calibrate: the h_bound that meets a target overhead (Diep, Elbaum, Cohen leave it
// to the engineer; the issue asks for it measured). k random units of the inventory are probed
// (a one-variant manifest given to the benchmark through PERFHAT_VARIANT_MANIFEST) and the
// benchmark's CPU time is compared with the run without probes; k is bisected.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace perfhat::plan {

struct CalibrationStep {
  std::size_t h = 0;
  double overhead = 0;  // CPU time / baseline − 1 (median of the repetitions)
};

struct Calibration {
  std::size_t h_bound = 0;  // the largest h measured within the target (0: none was)
  std::vector<CalibrationStep> steps;
};

// Bisection over h in [1, units] for the largest h whose overhead(h) ≤ target. Overhead grows
// with h up to noise; each h is measured once (measure(h) returns its overhead). `units` is
// measured first: when it is within the target every unit fits.
Calibration bisectBound(std::size_t units, double target,
                        const std::function<double(std::size_t)>& measure);

// CPU seconds (user + system) of one run of `argv` with `env` added to this process's
// environment; throws std::runtime_error when it cannot start, is killed, or exits non-zero.
double cpuSecondsOf(const std::vector<std::string>& argv,
                    const std::vector<std::pair<std::string, std::string>>& env, double timeout_s);

// The manifest of one variant holding `units` (release "calibrate").
std::string singleVariantManifest(const std::vector<std::string>& units);

}  // namespace perfhat::plan
