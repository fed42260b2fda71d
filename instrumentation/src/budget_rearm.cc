#include "budget_rearm.h"

#include <algorithm>
#include <cmath>

namespace perfhat::budget {

bool RearmSchedule::arm(std::size_t window) {
  if (window < next_) return false;
  armed_at_ = window;
  next_ = window + every_;
  return true;
}

void RearmSchedule::measured(const std::map<std::string, double>& rates) {
  using T = RearmTunables;
  bool stable = measured_once_ && rates.size() == last_.size();
  for (const auto& [name, hz] : rates) {
    if (!stable) break;
    auto it = last_.find(name);
    if (it == last_.end()) {
      stable = false;
    } else if (std::max(hz, it->second) >= T::kQuietHz) {
      stable = std::abs(hz - it->second) <= T::kStableChange * std::max(hz, it->second);
    }
  }
  every_ = stable ? std::min(every_ * 2, T::kMaxEvery) : T::kFirstEvery;
  next_ = armed_at_ + every_;
  last_ = rates;
  measured_once_ = true;
}

}  // namespace perfhat::budget
