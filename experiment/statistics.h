// Statistics of the controlled experiment (paper §V-G): descriptive statistics, Shapiro-Wilk,
// two-sided Mann-Whitney U and the effect sizes Cliff's delta and Vargha-Delaney A12. Every
// function reproduces what SciPy 1.10 computes for the same call, so a researcher can check the
// report with the tool the field uses (experiment/scipy_compare_test.py does, to 1e-6).
#pragma once

#include <string>
#include <vector>

namespace perfhat::experiment {

struct Descriptives {
  size_t n = 0;
  double mean = 0;
  double sd = 0;  // sample standard deviation (n - 1 in the denominator)
};
Descriptives describe(const std::vector<double>& xs);

struct ShapiroResult {
  double w = 0;
  double p = 0;
};
// scipy.stats.shapiro: Royston's algorithm AS R94 (1995), evaluated in single precision like
// SciPy's Fortran (swilk.f), so W and p agree with SciPy to about 1e-7. Requires n >= 3.
ShapiroResult shapiroWilk(const std::vector<double>& xs);

struct MannWhitneyResult {
  double u = 0;        // U of the first sample (SciPy's U1)
  double p = 0;        // two-sided
  bool exact = false;  // which method scipy.stats.mannwhitneyu(method="auto") chose
};
// scipy.stats.mannwhitneyu(x, y) with its defaults: exact null distribution when either sample
// has at most 8 values and there are no ties; otherwise the normal approximation with tie
// correction and continuity correction.
MannWhitneyResult mannWhitneyU(const std::vector<double>& x, const std::vector<double>& y);

struct EffectSize {
  double cliffs_delta = 0;  // P(x > y) - P(x < y)
  std::string magnitude;    // Romano et al.: negligible < 0.147 <= small < 0.33 <= medium < 0.474
  double a12 = 0;           // Vargha-Delaney: P(x > y) + P(x = y) / 2
};
EffectSize effectSize(const std::vector<double>& x, const std::vector<double>& y);

// Midranks (scipy.stats.rankdata, method "average"), in the order of the input.
std::vector<double> averageRanks(const std::vector<double>& xs);

}  // namespace perfhat::experiment
