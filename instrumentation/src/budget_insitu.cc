#include "budget_insitu.h"

#include <algorithm>
#include <cmath>

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
      for (int b = 0; b < detail::kSelfTimingBuckets; ++b) {
        w.bucket_calls[k][b] = totals.bucket_calls[k][b] -
                               std::min(totals.bucket_calls[k][b], last_.bucket_calls[k][b]);
        w.bucket_ticks[k][b] = totals.bucket_ticks[k][b] -
                               std::min(totals.bucket_ticks[k][b], last_.bucket_ticks[k][b]);
      }
    }
    windows_.push_back(w);
    while (windows_.size() > std::max<std::size_t>(windows, 1)) windows_.pop_front();
  }
  last_ = totals;
  if (ns_per_tick > 0) ns_per_tick_ = ns_per_tick;
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

double InSituPrices::robust_mean_s(detail::SelfTimedKind kind, double calibrated) const {
  uint64_t c[detail::kSelfTimingBuckets] = {}, t[detail::kSelfTimingBuckets] = {}, n = 0;
  for (const Window& w : windows_) {
    for (int b = 0; b < detail::kSelfTimingBuckets; ++b) {
      c[b] += w.bucket_calls[kind][b];
      t[b] += w.bucket_ticks[kind][b];
      n += w.bucket_calls[kind][b];
    }
  }
  if (n == 0 || ns_per_tick_ <= 0) return 0;
  int median = 0;
  for (uint64_t below = 0; below + c[median] < (n + 1) / 2; ++median) below += c[median];
  const double cap_ns = std::max({kCapMinNs, kCapPerCalibrated * calibrated * 1e9,
                                  kCapPerMedian * std::ldexp(ns_per_tick_, median + 1)});
  uint64_t kept = 0, ticks = 0;
  for (int b = 0; b < detail::kSelfTimingBuckets && std::ldexp(ns_per_tick_, b) <= cap_ns; ++b) {
    kept += c[b];
    ticks += t[b];
  }
  return kept > 0 ? static_cast<double>(ticks) * ns_per_tick_ * 1e-9 / static_cast<double>(kept)
                  : 0;
}

double InSituPrices::target_s(detail::SelfTimedKind kind, double calibrated) const {
  if (calls(kind) < kMinCalls) return calibrated;
  return std::max(calibrated, robust_mean_s(kind, calibrated));
}

double InSituPrices::step(detail::SelfTimedKind kind, double calibrated) {
  // From a positive price only: a step from 0 would be no limit at all.
  const double last = charged_[kind] > 0 ? charged_[kind] : std::max(calibrated, kMinPriceS);
  const double target = target_s(kind, calibrated);
  charged_[kind] =
      std::max(kMinPriceS, std::clamp(target, last / kMaxStepPerWindow, last * kMaxStepPerWindow));
  return charged_[kind];
}

}  // namespace perfhat::budget
