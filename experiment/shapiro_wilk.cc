// Shapiro-Wilk W and its p-value by Royston's algorithm AS R94 (Appl. Statist. 44(4), 1995),
// with AS 111 for normal quantiles, AS 181.2 for polynomials and AS 66 for the normal tail.
// SciPy runs the Fortran original in single precision (REAL); this file does the same, in the
// same order of operations, so the results agree with scipy.stats.shapiro to float rounding.
// Only the uncensored case is needed (every participant finishes every task).
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "experiment/statistics.h"

namespace perfhat::experiment {
namespace {

// AS 181.2: c[0] + c[1] x + ... + c[n-1] x^(n-1), evaluated as the algorithm does.
float poly(const float* c, int n, float x) {
  float result = c[0];
  if (n == 1) return result;
  float p = x * c[n - 1];
  for (int j = n - 2; j >= 1; --j) p = (p + c[j]) * x;
  return result + p;
}

// AS 111: the normal deviate with lower tail area p (single-precision version).
float normalQuantile(float p) {
  const float q = p - 0.5f;
  if (std::fabs(q) <= 0.42f) {
    const float r = q * q;
    return q *
           (((-25.44106049637f * r + 41.39119773534f) * r + -18.61500062529f) * r +
            2.50662823884f) /
           ((((3.13082909833f * r + -21.06224101826f) * r + 23.08336743743f) * r +
             -8.47351093090f) *
                r +
            1.0f);
  }
  float r = q > 0 ? 1.0f - p : p;
  if (r <= 0) return 0;
  r = std::sqrt(-std::log(r));
  const float v =
      (((2.32121276858f * r + 4.85014127135f) * r + -2.29796479134f) * r + -2.78718931138f) /
      ((1.63706781897f * r + 3.54388924762f) * r + 1.0f);
  return q < 0 ? -v : v;
}

// AS 66: upper tail area of the standard normal from x to infinity (double precision).
double normalUpperTail(double x) {
  bool upper = true;
  double z = x;
  if (z < 0) {
    upper = false;
    z = -z;
  }
  double tail;
  if (z > 7.0 && !(upper && z <= 38.0)) {
    tail = 0;
  } else {
    const double y = 0.5 * z * z;
    if (z <= 1.28) {
      tail = 0.5 -
             z * (0.398942280444 -
                  0.399903438504 * y /
                      (y + 5.75885480458 -
                       29.8213557808 / (y + 2.62433121679 + 48.6959930692 / (y + 5.92885724438))));
    } else {
      tail = 0.398942280385 * std::exp(-y) /
             (z - 3.8052e-8 +
              1.00000615302 /
                  (z + 3.98064794e-4 +
                   1.98615381364 /
                       (z - 0.151679116635 +
                        5.29330324926 / (z + 4.8385912808 -
                                         15.1508972451 / (z + 0.742380924027 +
                                                          30.789933034 / (z + 3.99019417011))))));
    }
  }
  return upper ? tail : 1.0 - tail;
}

// Coefficients a_1..a_{n/2} of the W statistic (AS R94, the approximation for n > 3).
std::vector<float> coefficients(int n) {
  const int half = n / 2;
  std::vector<float> a(half);
  if (n == 3) {
    a[0] = 0.70711f;
    return a;
  }
  static const float c1[6] = {0.0f, 0.221157f, -0.147981f, -2.07119f, 4.434685f, -2.706056f};
  static const float c2[6] = {0.0f, 0.042981f, -0.293762f, -1.752461f, 5.682633f, -3.582633f};
  const float an = static_cast<float>(n);
  const float an25 = an + 0.25f;
  float summ2 = 0;
  for (int i = 0; i < half; ++i) {
    a[i] = normalQuantile((static_cast<float>(i + 1) - 0.375f) / an25);
    summ2 = summ2 + a[i] * a[i];
  }
  summ2 = summ2 * 2.0f;
  const float ssumm2 = std::sqrt(summ2);
  const float rsn = 1.0f / std::sqrt(an);
  const float a1 = poly(c1, 6, rsn) - a[0] / ssumm2;
  int first_scaled;
  float fac;
  if (n > 5) {
    first_scaled = 2;
    const float a2 = -a[1] / ssumm2 + poly(c2, 6, rsn);
    fac = std::sqrt((summ2 - 2.0f * (a[0] * a[0]) - 2.0f * (a[1] * a[1])) /
                    (1.0f - 2.0f * (a1 * a1) - 2.0f * (a2 * a2)));
    a[0] = a1;
    a[1] = a2;
  } else {
    first_scaled = 1;
    fac = std::sqrt((summ2 - 2.0f * (a[0] * a[0])) / (1.0f - 2.0f * (a1 * a1)));
    a[0] = a1;
  }
  for (int i = first_scaled; i < half; ++i) a[i] = -a[i] / fac;
  return a;
}

// Median as numpy computes it (mean of the two middle values for even n), in double.
double median(std::vector<double> xs) {
  std::sort(xs.begin(), xs.end());
  const size_t m = xs.size() / 2;
  return xs.size() % 2 ? xs[m] : (xs[m - 1] + xs[m]) / 2;
}

}  // namespace

ShapiroResult shapiroWilk(const std::vector<double>& xs) {
  const int n = static_cast<int>(xs.size());
  if (n < 3) throw std::invalid_argument("Shapiro-Wilk needs at least 3 values");
  // SciPy centres on the median in double precision, sorts, then hands REALs to the Fortran.
  const double med = median(xs);
  std::vector<double> centred;
  centred.reserve(xs.size());
  for (double x : xs) centred.push_back(x - med);
  std::sort(centred.begin(), centred.end());
  std::vector<float> x(centred.begin(), centred.end());

  const std::vector<float> a = coefficients(n);
  const float range = x[n - 1] - x[0];
  if (range < 1e-19f) return {1.0f, 1.0f};  // zero range: SciPy returns W = 1, p = 1 (and warns)

  // W as the squared correlation between the data and the coefficients (a is antisymmetric:
  // a_i for the i-th smallest value is -a[i], for the i-th largest +a[i]).
  auto coef = [&](int i, int j) -> float {  // 1-based i, j = n + 1 - i as in the algorithm
    if (i == j) return 0.0f;
    const float v = a[std::min(i, j) - 1];
    return i > j ? v : -v;
  };
  float sx = x[0] / range;
  float sa = -a[0];
  for (int i = 2, j = n - 1; i <= n; ++i, --j) {
    const float xi = x[i - 1] / range;
    sx = sx + xi;
    if (i != j) sa = sa + coef(i, j);
  }
  sa = sa / static_cast<float>(n);
  sx = sx / static_cast<float>(n);
  float ssa = 0, ssx = 0, sax = 0;
  for (int i = 1, j = n; i <= n; ++i, --j) {
    const float asa = (i != j ? coef(i, j) : 0.0f) - sa;
    const float xsx = x[i - 1] / range - sx;
    ssa = ssa + asa * asa;
    ssx = ssx + xsx * xsx;
    sax = sax + asa * xsx;
  }
  // 1 - W computed directly, to avoid rounding error for W near 1.
  const float ssassx = std::sqrt(ssa * ssx);
  const float w1 = (ssassx - sax) * (ssassx + sax) / (ssa * ssx);
  const float w = 1.0f - w1;

  if (n == 3) {  // exact distribution
    const float pi6 = 1.909859f, stqr = 1.047198f;
    return {w, pi6 * (std::asin(std::sqrt(w)) - stqr)};
  }
  static const float g[2] = {-2.273f, 0.459f};
  static const float c3[4] = {0.5440f, -0.39978f, 0.025054f, -6.714e-4f};
  static const float c4[4] = {1.3822f, -0.77857f, 0.062767f, -0.0020322f};
  static const float c5[4] = {-1.5861f, -0.31082f, -0.083751f, 0.0038915f};
  static const float c6[3] = {-0.4803f, -0.082676f, 0.0030302f};
  const float an = static_cast<float>(n);
  float y = std::log(w1);
  const float lxx = std::log(an);
  float m, s;
  if (n <= 11) {
    const float gamma = poly(g, 2, an);
    if (y >= gamma) return {w, 1e-19f};
    y = -std::log(gamma - y);
    m = poly(c3, 4, an);
    s = std::exp(poly(c4, 4, an));
  } else {
    m = poly(c5, 4, lxx);
    s = std::exp(poly(c6, 3, lxx));
  }
  const float p = static_cast<float>(normalUpperTail(static_cast<double>((y - m) / s)));
  return {w, p};
}

}  // namespace perfhat::experiment
