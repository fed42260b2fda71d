#include "probe_calibration.h"

#include <algorithm>
#include <limits>

namespace perfhat::autoinstrument {

ProbeCosts calibrate(CalibrationTarget& target, uint64_t (*clock)(), int calls, int trials) {
  ProbeCosts costs;
  calls = std::max(calls, 1);
  trials = std::max(trials, 1);
  // The clock's own cost and the harness's: the cheapest loop of calls without a probe.
  auto cheapest_loop = [&](auto&& one_call) {
    uint64_t best = std::numeric_limits<uint64_t>::max();
    for (int t = 0; t < trials; ++t) {
      const uint64_t a = clock();
      for (int i = 0; i < calls; ++i) one_call();
      const uint64_t b = clock();
      best = std::min(best, b - a);
    }
    return best;
  };
  target.run_harness();  // warm
  const uint64_t floor = cheapest_loop([&] { target.run_harness(); });
  for (int k = 0; k < kProbeKinds; ++k) {
    const auto kind = static_cast<ProbeKind>(k);
    uint64_t best = std::numeric_limits<uint64_t>::max();
    uint64_t best_self = std::numeric_limits<uint64_t>::max();
    target.run_pair(kind);  // warm: caches, first-use paths
    for (int t = 0; t < trials; ++t) {
      target.reset_self();
      const uint64_t a = clock();
      for (int i = 0; i < calls; ++i) target.run_pair(kind);
      const uint64_t b = clock();
      best = std::min(best, b - a > floor ? b - a - floor : 0);
      best_self = std::min(best_self, target.self_ticks(kind));
    }
    costs.pair[k] = (best << kCostShift) / static_cast<uint64_t>(calls);
    costs.self[k] = best_self;
  }
  return costs;
}

}  // namespace perfhat::autoinstrument
