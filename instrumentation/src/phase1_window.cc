#include "phase1_window.h"

#include <algorithm>

namespace perfhat::detail {

std::atomic<uint64_t> g_phase1_window_calls{0};
std::atomic<uint64_t> g_phase1_window_ns{0};
std::atomic<uint32_t> g_phase1_function_calls{0};
std::atomic<double> g_phase1_duty{1};
std::atomic<double (*)(const Site& site)> g_phase1_scale{nullptr};
std::atomic<void (*)()> g_phase1_tick{nullptr};
std::atomic<void (*)()> g_phase1_exit{nullptr};
std::atomic<bool> g_phase1_carried{false};

void scale_phase1_metrics(tigris::EventMetrics& e, double scale) {
  if (scale == 1) return;
  using namespace tigris::metric;
  for (std::string_view k : {kInvocationFrequency, kErrorLevel, kConcurrencyLevel}) {
    auto it = e.metrics.find(k);
    if (it != e.metrics.end()) it->second *= scale;
  }
  // Calls between the first and the last timed one: 1 / scale of them were counted.
  auto it = e.metrics.find(kInterArrivalTime);
  if (it != e.metrics.end()) it->second /= scale;
}

void CountedTime::open(uint64_t now) {
  if (open_) return;
  if (!started_) {
    started_ = true;
    first_ = now;
  }
  for (size_t i = 0; i < kept_since_.size(); ++i) {
    if (kept_since_[i] != 0) kept_[i] += now - (kept_since_[i] - 1);
    kept_since_[i] = 0;
  }
  open_ = true;
  window_start_ = now;
}

void CountedTime::grow(size_t n) {
  if (kept_.size() >= n) return;
  kept_.resize(n, 0);
  kept_since_.resize(n, 0);
  left_.resize(n, 0);
  left_since_.resize(n, 0);
}

bool CountedTime::leave(size_t i, uint64_t now) {
  if (!open_ || now < window_start_) return false;
  grow(i + 1);
  if (left_since_[i] != 0) return false;
  left_since_[i] = now + 1;
  return true;
}

void CountedTime::close(uint64_t now, const std::vector<bool>& kept) {
  if (!open_) return;
  open_ = false;
  in_windows_ += now - window_start_;
  grow(kept.size());
  for (size_t i = 0; i < left_since_.size(); ++i) {
    if (left_since_[i] != 0) left_[i] += now - (left_since_[i] - 1);
    left_since_[i] = 0;
  }
  for (size_t i = 0; i < kept.size(); ++i) kept_since_[i] = kept[i] ? now + 1 : 0;
}

double CountedTime::scale(size_t i, uint64_t now) const {
  if (!started_) return 1;
  const uint64_t elapsed = now - first_;
  uint64_t counted = in_windows_ + (open_ ? now - window_start_ : 0);
  if (i < kept_.size()) {
    counted += kept_[i];
    if (!open_ && kept_since_[i] != 0) counted += now - (kept_since_[i] - 1);
    counted -= left_[i];
    if (open_ && left_since_[i] != 0 && now > left_since_[i] - 1)
      counted -= now - (left_since_[i] - 1);
  }
  if (counted == 0 || counted >= elapsed) return 1;
  return static_cast<double>(elapsed) / static_cast<double>(counted);
}

}  // namespace perfhat::detail
