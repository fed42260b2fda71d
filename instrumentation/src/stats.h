// Statistical primitives for Tigris grouping and the adaptive sampler (thesis ch. 4-5). No
// external dependency: libperfhat must stay self-contained.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace perfhat::stats {

// Welford running mean/variance (Knuth 1997), mergeable (Chan et al.) across threads.
struct Welford {
  uint64_t n = 0;
  double mean = 0;
  double m2 = 0;
  void add(double x);
  void merge(const Welford& o);
  double variance() const;  // sample variance (n-1); 0 when n < 2
  double stddev() const;
};

// Standard normal CDF and quantile (Acklam's rational approximation refined by one Halley step).
double normal_cdf(double x);
double normal_quantile(double p);
// Two-sided critical value for a confidence level in (0,1): Phi^-1(1 - (1-conf)/2).
double z_critical(double confidence);

// Student-t CDF with `df` degrees of freedom (regularized incomplete beta).
double student_t_cdf(double t, double df);
// Two-sided p-value of a t statistic.
double student_t_two_sided_p(double t, double df);

struct TTestResult {
  double t = 0;
  double df = 0;
  double p = 1;
  bool equal = true;  // H0 (equal means) not rejected at alpha
};
// Pooled two-sample t-test (DESIGN §10 decision for Algorithm 2). Fewer than 2 values in either
// side, or zero pooled variance with equal means, yields equal = true.
TTestResult pooled_t_test(const std::vector<double>& a, const std::vector<double>& b, double alpha);
// One-sample two-sided t-test of a sample summary against a postulated mean mu0.
TTestResult one_sample_t_test(const Welford& sample, double mu0, double alpha);

// Kolmogorov-Smirnov test of `xs` against a normal with the sample mean/sd (Lilliefors caveat:
// parameters are estimated, the p-value uses the asymptotic Kolmogorov distribution as Tigris
// does). Returns the p-value; data with < 3 points or zero variance are reported as not normal
// (p = 0) because sigma-bands would be meaningless.
double ks_normality_p(std::vector<double> xs);
// Kolmogorov distribution survival function Q_KS(lambda).
double kolmogorov_q(double lambda);

// Median of a copy (linear interpolation between the two middle values for even sizes).
double median(std::vector<double> xs);
// Quantile with linear interpolation between order statistics (R type 7, numpy default).
double quantile(std::vector<double> xs, double q);

// Cochran's minimum sample size and the finite-population correction (Algorithm 3 lines 2-3).
double cochran_n0(double zcrit, double p, double e);
double cochran_fpc(double n0, double population);

}  // namespace perfhat::stats
