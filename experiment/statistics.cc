// Descriptive statistics and the effect sizes of the experiment's analysis.
#include <algorithm>
#include <cmath>

#include "experiment/statistics.h"

namespace perfhat::experiment {

Descriptives describe(const std::vector<double>& xs) {
  Descriptives d;
  d.n = xs.size();
  if (xs.empty()) return d;
  double sum = 0;
  for (double x : xs) sum += x;
  d.mean = sum / static_cast<double>(d.n);
  if (d.n < 2) return d;
  double ss = 0;  // two-pass: no cancellation for large, similar times
  for (double x : xs) ss += (x - d.mean) * (x - d.mean);
  d.sd = std::sqrt(ss / static_cast<double>(d.n - 1));
  return d;
}

EffectSize effectSize(const std::vector<double>& x, const std::vector<double>& y) {
  EffectSize e;
  if (x.empty() || y.empty()) return e;
  // Dominance counts by binary search in the sorted second sample: O((m + n) log n).
  std::vector<double> sorted(y);
  std::sort(sorted.begin(), sorted.end());
  double greater = 0, less = 0;
  for (double a : x) {
    const auto lo = std::lower_bound(sorted.begin(), sorted.end(), a);
    const auto hi = std::upper_bound(lo, sorted.end(), a);
    greater += static_cast<double>(lo - sorted.begin());
    less += static_cast<double>(sorted.end() - hi);
  }
  const double pairs = static_cast<double>(x.size()) * static_cast<double>(y.size());
  e.cliffs_delta = (greater - less) / pairs;
  e.a12 = (greater + (pairs - greater - less) / 2) / pairs;
  const double mag = std::fabs(e.cliffs_delta);
  e.magnitude = mag < 0.147   ? "negligible"
                : mag < 0.33  ? "small"
                : mag < 0.474 ? "medium"
                              : "large";
  return e;
}

}  // namespace perfhat::experiment
