#include "probe_calibration.h"

#include <algorithm>
#include <limits>

namespace perfhat::autoinstrument {

namespace {

// The loop times of one series: the cheapest, and whether another loop confirmed it.
class Loops {
 public:
  static constexpr int kMaxTrials = 64;
  Loops(int trials, int min_trials) : trials_(trials), min_trials_(min_trials) {}
  void add(uint64_t t) {
    times_[n_++] = t;
    best_ = std::min(best_, t);
  }
  uint64_t best() const { return best_; }
  bool done() const {
    if (n_ >= trials_) return true;
    if (n_ < min_trials_) return false;
    int near = 0;
    for (int i = 0; i < n_; ++i) near += times_[i] - best_ <= best_ >> kConfirmShift;
    return near >= 2;
  }

 private:
  int trials_, min_trials_, n_ = 0;
  uint64_t best_ = std::numeric_limits<uint64_t>::max();
  uint64_t times_[kMaxTrials] = {};
};

}  // namespace

ProbeCosts calibrate(CalibrationTarget& target, uint64_t (*clock)(), int calls, int trials,
                     int min_trials) {
  ProbeCosts costs;
  calls = std::max(calls, 1);
  trials = std::clamp(trials, 1, Loops::kMaxTrials);
  min_trials = min_trials <= 0 ? trials : std::min(std::max(min_trials, 2), trials);
  // The clock's own cost and the harness's: the cheapest loop of calls without a probe.
  auto cheapest_loop = [&](auto&& one_call) {
    Loops loops(trials, min_trials);
    while (!loops.done()) {
      const uint64_t a = clock();
      for (int i = 0; i < calls; ++i) one_call();
      const uint64_t b = clock();
      loops.add(b - a);
    }
    return loops.best();
  };
  target.run_harness();  // warm
  const uint64_t floor = cheapest_loop([&] { target.run_harness(); });
  for (int k = 0; k < kProbeKinds; ++k) {
    const auto kind = static_cast<ProbeKind>(k);
    uint64_t best_self = std::numeric_limits<uint64_t>::max();
    target.run_pair(kind);  // warm: caches, first-use paths
    Loops loops(trials, min_trials);
    while (!loops.done()) {
      target.reset_self();
      const uint64_t a = clock();
      for (int i = 0; i < calls; ++i) target.run_pair(kind);
      const uint64_t b = clock();
      loops.add(b - a);
      best_self = std::min(best_self, target.self_ticks(kind));
    }
    const uint64_t best = loops.best() > floor ? loops.best() - floor : 0;
    costs.pair[k] = (best << kCostShift) / static_cast<uint64_t>(calls);
    costs.self[k] = best_self;
  }
  return costs;
}

}  // namespace perfhat::autoinstrument
