// Hill estimator of the tail index α of call-frequency skew (seed 001 §5.4; reference §2.6).
//
// The visit counts of one execution are sorted descending, X(1) ≥ … ≥ X(n); for k < n
//   H(k) = (1/k) Σ_{i=1..k} ln X(i) − ln X(k+1),   α̂(k) = 1 / H(k).
// α̂ swings for small k and settles as k grows; α is read from the stable region. α ≤ 1: a few
// functions take far more calls than the rest (infinite mean); 1 < α ≤ 2: infinite variance.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

namespace perfhat::handler::dynamic {

struct HillOptions {
  // Fewer positive values than this: no estimate (the curve never settles on a handful).
  size_t min_values = 20;
  // A stable range: consecutive k whose α̂ all lie within ±tolerance of the range's midrange.
  double tolerance = 0.05;
  // ... and at least this many k (and this share of n), so a short flat stretch is not taken.
  size_t min_run = 8;
  double min_run_share = 0.05;
};

struct HillCurve {
  // alpha[k - 1] = α̂(k) for k = 1 .. n − 1 (0 where H(k) = 0: equal values up to X(k+1)).
  std::vector<double> alpha;
};

struct HillEstimate {
  double alpha = 0;   // median α̂ over the stable range
  size_t k_from = 0;  // stable range [k_from, k_to] (1-based k)
  size_t k_to = 0;
  size_t values = 0;  // positive values used
};

// α̂(k) for every k. Values ≤ 0 (and NaN) are left out: ln X(k+1) must be defined.
HillCurve hillCurve(std::vector<double> values);

// The longest stable range of the curve and its α, or nothing when there are too few values or
// the curve never settles (the data is not heavy-tailed).
std::optional<HillEstimate> hillEstimate(const std::vector<double>& values,
                                         const HillOptions& options = {});

}  // namespace perfhat::handler::dynamic
