// Two-sided Mann-Whitney U test as scipy.stats.mannwhitneyu(x, y) computes it with its defaults
// (use_continuity=True, alternative="two-sided", method="auto").
#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include "experiment/statistics.h"

namespace perfhat::experiment {
namespace {

// P(U >= u) under the null hypothesis for samples of sizes m and n without ties. The number of
// arrangements with U = k is the coefficient of q^k in the Gaussian binomial [m+n choose m]_q
// = prod_{i=1..s} (1 - q^(l+i)) / (1 - q^i) with s = min(m, n), l = max(m, n). Each factor is
// applied in turn, so after step i the polynomial is [l+i choose i]_q: non-negative counts, cost
// O(s^2 l). Doubles hold the counts (relative rounding ~1e-16 of the total, far below 1e-6).
double exactUpperTail(size_t m, size_t n, size_t u) {
  const size_t s = std::min(m, n), l = std::max(m, n);
  const size_t degree = s * l;
  std::vector<double> c(degree + 1, 0.0);
  c[0] = 1;
  for (size_t i = 1; i <= s; ++i) {
    for (size_t k = degree; k >= l + i; --k) c[k] -= c[k - (l + i)];  // * (1 - q^(l+i))
    for (size_t k = i; k <= degree; ++k) c[k] += c[k - i];            // / (1 - q^i)
  }
  double total = 0, tail = 0;
  for (size_t k = 0; k <= degree; ++k) {
    const double v = std::max(0.0, c[k]);  // exact values are >= 0; clear rounding residue
    total += v;
    if (k >= u) tail += v;
  }
  return tail / total;
}

}  // namespace

std::vector<double> averageRanks(const std::vector<double>& xs) {
  std::vector<size_t> order(xs.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return xs[a] < xs[b]; });
  std::vector<double> ranks(xs.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && xs[order[j + 1]] == xs[order[i]]) ++j;
    const double r = (static_cast<double>(i + 1) + static_cast<double>(j + 1)) / 2;
    for (size_t k = i; k <= j; ++k) ranks[order[k]] = r;
    i = j + 1;
  }
  return ranks;
}

MannWhitneyResult mannWhitneyU(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.empty() || y.empty()) throw std::invalid_argument("Mann-Whitney U needs two samples");
  const size_t n1 = x.size(), n2 = y.size();
  std::vector<double> xy(x);
  xy.insert(xy.end(), y.begin(), y.end());
  const std::vector<double> ranks = averageRanks(xy);
  double r1 = 0;
  for (size_t i = 0; i < n1; ++i) r1 += ranks[i];
  const double nn1 = static_cast<double>(n1), nn2 = static_cast<double>(n2);
  const double u1 = r1 - nn1 * (nn1 + 1) / 2;
  const double u2 = nn1 * nn2 - u1;
  const double u = std::max(u1, u2);  // two-sided: twice the upper tail of the larger U

  std::map<double, size_t> counts;
  for (double v : xy) ++counts[v];
  double tie_term = 0;
  for (const auto& [value, t] : counts) {
    const double tt = static_cast<double>(t);
    tie_term += tt * tt * tt - tt;
  }
  const bool ties = tie_term > 0;

  MannWhitneyResult result;
  result.u = u1;
  result.exact = !(n1 > 8 && n2 > 8) && !ties;  // SciPy's choice for method="auto"
  double p;
  if (result.exact) {
    p = 2 * exactUpperTail(n1, n2, static_cast<size_t>(u));
  } else {
    const double n = nn1 + nn2;
    const double mu = nn1 * nn2 / 2;
    const double sd = std::sqrt(nn1 * nn2 / 12 * ((n + 1) - tie_term / (n * (n - 1))));
    const double z = (u - mu - 0.5) / sd;  // continuity correction
    p = 2 * (0.5 * std::erfc(z / std::sqrt(2.0)));
  }
  result.p = std::clamp(p, 0.0, 1.0);
  return result;
}

}  // namespace perfhat::experiment
