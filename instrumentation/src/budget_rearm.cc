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

double rearmRecordProbability(double allowed_cpu_per_s, double record_s, std::size_t sites,
                              double span_windows, double site_calls_per_s) {
  if (!(site_calls_per_s > 0)) return 1;
  if (!(allowed_cpu_per_s > 0) || !(record_s > 0) || sites == 0 || !(span_windows > 0)) return 0;
  const double windows = std::min(RearmTunables::kRecordShare * span_windows, 1.0);
  const double records_per_s = windows * allowed_cpu_per_s / record_s / static_cast<double>(sites);
  // A record's weight (span / probability) stays at most kMaxRecordWeight: the handler refuses
  // weights over 1e9.
  const double least = std::min(span_windows / RearmTunables::kMaxRecordWeight, 1.0);
  return std::clamp(records_per_s / site_calls_per_s, least, 1.0);
}

}  // namespace perfhat::budget
