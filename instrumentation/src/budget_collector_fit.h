// The collector thread's CPU as a fixed part plus a price per recorded call, fitted over recent
// planning windows. The plan's own changes vary the recorded count from window to window, which
// is what separates the two parts.
#pragma once

#include <array>
#include <cstddef>
#include <deque>

namespace perfhat::budget {

class CollectorCostFit {
 public:
  // One window: the calls recorded in it, the collector's CPU seconds and the wall seconds.
  void add(double recorded, double collector_cpu_s, double wall_s);
  void clear();
  // CPU seconds per recorded call; < 0 until the windows seen allow a fit.
  double per_call_s() const { return per_call_s_; }
  // CPU seconds per second that no plan changes (the collector's periodic work).
  double fixed_per_s() const { return fixed_per_s_; }

 private:
  static constexpr std::size_t kWindows = 30;
  std::deque<std::array<double, 3>> windows_;  // (recorded, cpu s, wall s)
  double per_call_s_ = -1;
  double fixed_per_s_ = 0;
};

}  // namespace perfhat::budget
