#include "budget_insitu.h"

#include <algorithm>

namespace perfhat::budget {

void InSituPrices::add(const detail::SelfTimingTotals& totals, double ns_per_tick,
                       std::size_t windows) {
  if (started_) {
    Window w;
    for (int k = 0; k < detail::kSelfTimedKinds; ++k) {
      // Totals only grow; a smaller one (counters reset under a test) starts from it.
      w.calls[k] = totals.calls[k] - std::min(totals.calls[k], last_.calls[k]);
      w.seconds[k] =
          static_cast<double>(totals.ticks[k] - std::min(totals.ticks[k], last_.ticks[k])) *
          ns_per_tick * 1e-9;
    }
    windows_.push_back(w);
    while (windows_.size() > std::max<std::size_t>(windows, 1)) windows_.pop_front();
  }
  last_ = totals;
  started_ = true;
}

uint64_t InSituPrices::calls(detail::SelfTimedKind kind) const {
  uint64_t n = 0;
  for (const Window& w : windows_) n += w.calls[kind];
  return n;
}

double InSituPrices::mean_s(detail::SelfTimedKind kind) const {
  double s = 0;
  for (const Window& w : windows_) s += w.seconds[kind];
  const uint64_t n = calls(kind);
  return n > 0 ? s / static_cast<double>(n) : 0;
}

double InSituPrices::price(detail::SelfTimedKind kind, double calibrated) const {
  if (calls(kind) < kMinCalls) return calibrated;
  return std::max(calibrated, mean_s(kind));
}

}  // namespace perfhat::budget
