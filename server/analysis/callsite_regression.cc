#include "server/analysis/callsite_regression.h"

#include <algorithm>
#include <cmath>

namespace perfhat::analysis::inference_detail {
namespace {

// The sites as weighted observations: one row (1, rate[, size]) per site, its mean latency,
// its calls as the weight, and the weighted means.
struct Observations {
  std::vector<std::vector<double>> X;
  std::vector<double> y, w;
  double mean_rate = 0, mean_size = 0, mean_y = 0;
  uint64_t samples = 0;
};

Observations observe(const std::vector<const CallSiteStats*>& sites, bool sizes) {
  Observations o;
  double wsum = 0;
  for (auto* c : sites) {
    std::vector<double> row{1.0, c->caller_rate_per_s};
    if (sizes) row.push_back(*c->caller_input_size);
    o.X.push_back(row);
    o.y.push_back(c->mean_ns);
    double wt = static_cast<double>(c->count);
    o.w.push_back(wt);
    wsum += wt;
    o.mean_rate += wt * c->caller_rate_per_s;
    o.mean_size += wt * (sizes ? *c->caller_input_size : 0);
    o.mean_y += wt * c->mean_ns;
    o.samples += c->count;
  }
  o.mean_rate /= wsum;
  o.mean_size /= wsum;
  o.mean_y /= wsum;
  return o;
}

// The model is only trusted inside the workloads it was learned from: the caller's rate is
// clamped to the observed range (no extrapolation), and the fit is shrunk toward the call sites'
// weighted mean by how much of their variation it explains (adjusted R²), so a fit through as
// many points as it has parameters, or a poor one, falls back to the mean instead of following
// noise. Sets the fit's fields and `predicted`; leaves them when the system is singular.
void fitAndShrink(Observations& o, SiteRegression& r) {
  r.fitted = leastSquares(o.X, o.y, o.w, r.beta);
  if (!r.fitted && r.sizes) {  // collinear sizes: retry on rate only
    for (auto& row : o.X) row.pop_back();
    r.fitted = leastSquares(o.X, o.y, o.w, r.beta);
  }
  if (!r.fitted) return;
  r.rate_lo = r.rate_hi = o.X[0][1];
  for (const auto& row : o.X) {
    r.rate_lo = std::min(r.rate_lo, row[1]);
    r.rate_hi = std::max(r.rate_hi, row[1]);
  }
  const double x_rate = std::clamp(r.rate, r.rate_lo, r.rate_hi);
  auto fitAt = [&](const std::vector<double>& row) {
    double v = 0;
    for (size_t i = 0; i < r.beta.size(); ++i) v += r.beta[i] * row[i];
    return v;
  };
  std::vector<double> at{1.0, x_rate};
  if (r.beta.size() > 2) at.push_back(o.mean_size);
  double ss_res = 0, ss_tot = 0;
  for (size_t row = 0; row < o.X.size(); ++row) {
    ss_res += o.w[row] * (o.y[row] - fitAt(o.X[row])) * (o.y[row] - fitAt(o.X[row]));
    ss_tot += o.w[row] * (o.y[row] - o.mean_y) * (o.y[row] - o.mean_y);
  }
  const double n_sites = static_cast<double>(o.X.size());
  const double k = static_cast<double>(r.beta.size());
  if (ss_tot > 0 && n_sites > k) {
    double r2 = 1 - ss_res / ss_tot;
    r.r2_adj = std::clamp(1 - (1 - r2) * (n_sites - 1) / (n_sites - k), 0.0, 1.0);
  }
  r.predicted = r.r2_adj * fitAt(at) + (1 - r.r2_adj) * o.mean_y;
}

}  // namespace

std::optional<SiteRegression> regressOnWorkload(const FeedbackItem& callee, double caller_rate) {
  SiteRegression r;
  for (const auto& c : callee.callsites)
    if (c.count > 0 && c.mean_ns > 0) r.sites.push_back(&c);
  r.sizes = !r.sites.empty() && std::all_of(r.sites.begin(), r.sites.end(), [](auto* c) {
    return c->caller_input_size.has_value();
  });
  bool any_rate =
      std::any_of(r.sites.begin(), r.sites.end(), [](auto* c) { return c->caller_rate_per_s > 0; });
  if (r.sites.empty() || !(any_rate || r.sizes)) return std::nullopt;
  Observations o = observe(r.sites, r.sizes);
  r.mean_size = o.mean_size;
  r.mean_y = o.mean_y;
  r.samples = o.samples;
  r.rate = caller_rate > 0 ? caller_rate : o.mean_rate;
  r.predicted = o.mean_y;
  fitAndShrink(o, r);
  r.lo = *std::min_element(o.y.begin(), o.y.end());
  r.hi = *std::max_element(o.y.begin(), o.y.end());
  r.predicted = std::clamp(r.predicted, r.lo, r.hi);
  return r;
}

bool leastSquares(const std::vector<std::vector<double>>& X, const std::vector<double>& y,
                  const std::vector<double>& w, std::vector<double>& beta) {
  size_t k = X.empty() ? 0 : X[0].size();
  if (k == 0 || X.size() < k) return false;
  std::vector<std::vector<double>> A(k, std::vector<double>(k + 1, 0));
  for (size_t r = 0; r < X.size(); ++r)
    for (size_t i = 0; i < k; ++i) {
      for (size_t j = 0; j < k; ++j) A[i][j] += w[r] * X[r][i] * X[r][j];
      A[i][k] += w[r] * X[r][i] * y[r];
    }
  for (size_t c = 0; c < k; ++c) {
    size_t piv = c;
    for (size_t r = c + 1; r < k; ++r)
      if (std::abs(A[r][c]) > std::abs(A[piv][c])) piv = r;
    double scale = 0;
    for (size_t j = 0; j < k; ++j) scale = std::max(scale, std::abs(A[c][j]));
    if (std::abs(A[piv][c]) <= 1e-12 * std::max(scale, 1.0)) return false;
    std::swap(A[c], A[piv]);
    for (size_t r = 0; r < k; ++r) {
      if (r == c) continue;
      double f = A[r][c] / A[c][c];
      for (size_t j = c; j <= k; ++j) A[r][j] -= f * A[c][j];
    }
  }
  beta.assign(k, 0);
  for (size_t i = 0; i < k; ++i) beta[i] = A[i][k] / A[i][i];
  return true;
}

}  // namespace perfhat::analysis::inference_detail
