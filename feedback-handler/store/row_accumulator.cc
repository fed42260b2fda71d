#include "feedback-handler/store/row_accumulator.h"

#include <cmath>
#include <stdexcept>

#include "feedback-handler/util/rfc3339.h"

namespace perfhat::handler::store_detail {

Window resolveWindow(const std::optional<TimeWindow>& w, int64_t now, int64_t default_minutes) {
  Window r{now - default_minutes * kBucketNs, now};
  if (w) {
    if (!w->from.empty()) {
      auto t = parseRfc3339(w->from);
      if (!t) throw std::invalid_argument("range.from is not an RFC 3339 timestamp: " + w->from);
      r.from_ns = *t;
    }
    if (!w->to.empty()) {
      auto t = parseRfc3339(w->to);
      if (!t) throw std::invalid_argument("range.to is not an RFC 3339 timestamp: " + w->to);
      r.to_ns = *t;
    }
  }
  if (r.to_ns <= r.from_ns) throw std::invalid_argument("time window ends before it starts");
  return r;
}

uint64_t roundCount(double c) {
  return c > 0 ? static_cast<uint64_t>(std::llround(std::min(c, DDSketch::kMaxCount))) : 0;
}

double wholeNs(double ns) { return std::isfinite(ns) ? std::nearbyint(ns) : ns; }

Stats toStats(const Acc& a, const Window& w, const TimeWindow& formatted) {
  Stats s;
  const DDSketch& k = a.sketch;
  s.count = roundCount(k.count());
  s.errors = roundCount(a.x1);
  s.mean_ns = wholeNs(k.mean());
  s.min_ns = wholeNs(k.min());
  s.max_ns = wholeNs(k.max());
  static constexpr double kQs[] = {0.5, 0.9, 0.95, 0.99};
  double q[4];
  k.quantiles(kQs, q);
  s.p50_ns = wholeNs(q[0]);
  s.p90_ns = wholeNs(q[1]);
  s.p95_ns = wholeNs(q[2]);
  s.p99_ns = wholeNs(q[3]);
  s.rate_per_s = k.count() / a.seconds(w);
  s.window = formatted;
  return s;
}

}  // namespace perfhat::handler::store_detail
