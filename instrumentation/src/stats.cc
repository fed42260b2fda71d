#include "stats.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace perfhat::stats {

void Welford::add(double x) {
  ++n;
  double d = x - mean;
  mean += d / static_cast<double>(n);
  m2 += d * (x - mean);
}

void Welford::merge(const Welford& o) {
  if (o.n == 0) return;
  if (n == 0) {
    *this = o;
    return;
  }
  double total = static_cast<double>(n + o.n);
  double d = o.mean - mean;
  mean += d * static_cast<double>(o.n) / total;
  m2 += o.m2 + d * d * static_cast<double>(n) * static_cast<double>(o.n) / total;
  n += o.n;
}

double Welford::variance() const { return n < 2 ? 0.0 : m2 / static_cast<double>(n - 1); }
double Welford::stddev() const { return std::sqrt(variance()); }

double normal_cdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

double normal_quantile(double p) {
  if (p <= 0) return -std::numeric_limits<double>::infinity();
  if (p >= 1) return std::numeric_limits<double>::infinity();
  // Acklam's coefficients.
  static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,  -2.759285104469687e+02,
                             1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                             6.680131188771972e+01, -1.328068155288572e+01};
  static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                             -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
  static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                             3.754408661907416e+00};
  const double plow = 0.02425;
  double x;
  if (p < plow) {
    double q = std::sqrt(-2 * std::log(p));
    x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  } else if (p <= 1 - plow) {
    double q = p - 0.5;
    double r = q * q;
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
  } else {
    double q = std::sqrt(-2 * std::log(1 - p));
    x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  // One Halley refinement step brings the error to ~1e-15.
  double e = normal_cdf(x) - p;
  double u = e * std::sqrt(2 * M_PI) * std::exp(x * x / 2);
  return x - u / (1 + x * u / 2);
}

double z_critical(double confidence) {
  confidence = std::clamp(confidence, 0.0, 1.0);
  return normal_quantile(1 - (1 - confidence) / 2);
}

namespace {
// Continued fraction for the regularized incomplete beta (Numerical Recipes' betacf idea).
double betacf(double a, double b, double x) {
  const int kMaxIter = 300;
  const double kEps = 3e-16, kFpmin = 1e-300;
  double qab = a + b, qap = a + 1, qam = a - 1;
  double c = 1, d = 1 - qab * x / qap;
  if (std::fabs(d) < kFpmin) d = kFpmin;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= kMaxIter; ++m) {
    int m2 = 2 * m;
    double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
    d = 1 + aa * d;
    if (std::fabs(d) < kFpmin) d = kFpmin;
    c = 1 + aa / c;
    if (std::fabs(c) < kFpmin) c = kFpmin;
    d = 1 / d;
    h *= d * c;
    aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
    d = 1 + aa * d;
    if (std::fabs(d) < kFpmin) d = kFpmin;
    c = 1 + aa / c;
    if (std::fabs(c) < kFpmin) c = kFpmin;
    d = 1 / d;
    double del = d * c;
    h *= del;
    if (std::fabs(del - 1) < kEps) break;
  }
  return h;
}

double incomplete_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  double lbt =
      std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log(1 - x);
  double bt = std::exp(lbt);
  if (x < (a + 1) / (a + b + 2)) return bt * betacf(a, b, x) / a;
  return 1 - bt * betacf(b, a, 1 - x) / b;
}
}  // namespace

double student_t_cdf(double t, double df) {
  if (std::isinf(t)) return t > 0 ? 1 : 0;
  double x = df / (df + t * t);
  double tail = 0.5 * incomplete_beta(df / 2, 0.5, x);
  return t > 0 ? 1 - tail : tail;
}

double student_t_two_sided_p(double t, double df) {
  if (std::isnan(t)) return 1;
  double x = df / (df + t * t);
  return std::isinf(t) ? 0.0 : incomplete_beta(df / 2, 0.5, x);
}

// t = diff / se and its two-sided p at r.df; a zero standard error gives t = ±inf (p = 0) or
// 0 (p = 1) instead of a division by zero.
static void finishTTest(double diff, double se, double alpha, TTestResult& r) {
  if (se == 0) {
    r.t = diff == 0 ? 0 : std::copysign(std::numeric_limits<double>::infinity(), diff);
    r.p = diff == 0 ? 1 : 0;
  } else {
    r.t = diff / se;
    r.p = student_t_two_sided_p(r.t, r.df);
  }
  r.equal = r.p > alpha;
}

TTestResult pooled_t_test(const std::vector<double>& a, const std::vector<double>& b,
                          double alpha) {
  TTestResult r;
  if (a.size() < 2 || b.size() < 2) return r;
  Welford wa, wb;
  for (double x : a) wa.add(x);
  for (double x : b) wb.add(x);
  double na = static_cast<double>(wa.n), nb = static_cast<double>(wb.n);
  r.df = na + nb - 2;
  double sp2 = ((na - 1) * wa.variance() + (nb - 1) * wb.variance()) / r.df;
  double se = std::sqrt(sp2 * (1 / na + 1 / nb));
  double diff = wa.mean - wb.mean;
  finishTTest(diff, se, alpha, r);
  return r;
}

TTestResult one_sample_t_test(const Welford& sample, double mu0, double alpha) {
  TTestResult r;
  if (sample.n < 2) return r;
  r.df = static_cast<double>(sample.n - 1);
  double se = sample.stddev() / std::sqrt(static_cast<double>(sample.n));
  double diff = sample.mean - mu0;
  finishTTest(diff, se, alpha, r);
  return r;
}

double kolmogorov_q(double lambda) {
  if (lambda < 1e-3) return 1;
  double sum = 0;
  for (int j = 1; j <= 100; ++j) {
    double term = 2 * ((j % 2) ? 1.0 : -1.0) * std::exp(-2.0 * j * j * lambda * lambda);
    sum += term;
    if (std::fabs(term) < 1e-12) break;
  }
  return std::clamp(sum, 0.0, 1.0);
}

double ks_normality_p(std::vector<double> xs) {
  if (xs.size() < 3) return 0;
  Welford w;
  for (double x : xs) w.add(x);
  double sd = w.stddev();
  if (!(sd > 0)) return 0;
  std::sort(xs.begin(), xs.end());
  double n = static_cast<double>(xs.size());
  double dmax = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    double f = normal_cdf((xs[i] - w.mean) / sd);
    dmax = std::max({dmax, (i + 1) / n - f, f - i / n});
  }
  // Stephens' small-sample correction of the asymptotic distribution.
  double sn = std::sqrt(n);
  return kolmogorov_q((sn + 0.12 + 0.11 / sn) * dmax);
}

double median(std::vector<double> xs) { return quantile(std::move(xs), 0.5); }

double quantile(std::vector<double> xs, double q) {
  if (xs.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(xs.begin(), xs.end());
  double h = (static_cast<double>(xs.size()) - 1) * std::clamp(q, 0.0, 1.0);
  size_t lo = static_cast<size_t>(std::floor(h));
  size_t hi = std::min(lo + 1, xs.size() - 1);
  return xs[lo] + (h - static_cast<double>(lo)) * (xs[hi] - xs[lo]);
}

double cochran_n0(double zcrit, double p, double e) {
  return zcrit * zcrit * p * (1 - p) / (e * e);
}

double cochran_fpc(double n0, double population) {
  if (population <= 0) return n0;
  return n0 / (1 + (n0 - 1) / population);
}

}  // namespace perfhat::stats
