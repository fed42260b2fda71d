#include "feedback-handler/dynamic/hill.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>

namespace perfhat::handler::dynamic {

HillCurve hillCurve(std::vector<double> values) {
  std::erase_if(values, [](double v) { return !(v > 0) || !std::isfinite(v); });
  std::sort(values.begin(), values.end(), std::greater<>());
  HillCurve c;
  if (values.size() < 2) return c;
  c.alpha.reserve(values.size() - 1);
  double sum_logs = 0;
  for (size_t k = 1; k < values.size(); ++k) {
    sum_logs += std::log(values[k - 1]);
    const double h = sum_logs / static_cast<double>(k) - std::log(values[k]);
    c.alpha.push_back(h > 0 ? 1 / h : 0);
  }
  return c;
}

std::optional<HillEstimate> hillEstimate(const std::vector<double>& values,
                                         const HillOptions& options) {
  const HillCurve c = hillCurve(values);
  const size_t n = c.alpha.size() + 1;
  if (c.alpha.empty() || n < options.min_values) return std::nullopt;
  const size_t min_run =
      std::max(options.min_run,
               static_cast<size_t>(std::ceil(options.min_run_share * static_cast<double>(n))));
  // The smallest k are the swinging part by construction; start at k = 5 at the least.
  const size_t first = std::min<size_t>(4, c.alpha.size() - 1);
  // Longest run [i, j] whose largest α̂ is at most (1+tol)/(1−tol) times its smallest: every α̂
  // of the run then lies within ±tol of the run's midrange. Two pointers over a sorted window.
  const double ratio = (1 + options.tolerance) / (1 - options.tolerance);
  size_t best_from = 0, best_len = 0;
  std::multiset<double> window;
  size_t i = first;
  for (size_t j = first; j < c.alpha.size(); ++j) {
    window.insert(c.alpha[j]);
    while (!window.empty() &&
           !(*window.begin() > 0 && *window.rbegin() <= ratio * *window.begin())) {
      window.erase(window.find(c.alpha[i]));
      ++i;
    }
    if (!window.empty() && j + 1 - i > best_len) {
      best_len = j + 1 - i;
      best_from = i;
    }
  }
  if (best_len < min_run) return std::nullopt;
  std::vector<double> run(c.alpha.begin() + static_cast<ptrdiff_t>(best_from),
                          c.alpha.begin() + static_cast<ptrdiff_t>(best_from + best_len));
  std::nth_element(run.begin(), run.begin() + static_cast<ptrdiff_t>(run.size() / 2), run.end());
  HillEstimate e;
  e.alpha = run[run.size() / 2];
  e.k_from = best_from + 1;
  e.k_to = best_from + best_len;
  e.values = n;
  return e;
}

}  // namespace perfhat::handler::dynamic
