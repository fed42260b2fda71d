// The call-site regression of the call rule (inference.h): a callee's latency over its callers'
// workload, learned from the callee's call sites and predicted for one caller. Numbers only; the
// call's estimate and derivation are made from them in callsite_inference.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "common/feedback.h"

namespace perfhat::analysis::inference_detail {

struct SiteRegression {
  std::vector<const CallSiteStats*> sites;  // the callee's sites with calls and a latency
  bool sizes = false;        // every site has its caller's input size: a second regressor
  double rate = 0;           // the workload (calls/s) predicted for: the caller's, else the sites'
  double mean_size = 0;      // the sites' mean input size, weighted by calls (with `sizes`)
  double mean_y = 0;         // the sites' mean latency, weighted by calls
  uint64_t samples = 0;      // calls behind the sites
  bool fitted = false;       // false: the workloads do not vary, the mean latency is used
  std::vector<double> beta;  // latency = β·(1, rate[, size]) (when fitted)
  double r2_adj = 0;         // the fit's adjusted R², by which it is trusted
  double rate_lo = 0, rate_hi = 0;  // the observed workloads (when fitted)
  double lo = 0, hi = 0;            // the sites' least and greatest mean latency
  double predicted = 0;             // in [lo, hi]
};

// The regression for a caller running at `caller_rate` calls/s (0: unknown), or nullopt when no
// site has a workload to regress on (neither a rate nor, on every site, an input size).
std::optional<SiteRegression> regressOnWorkload(const FeedbackItem& callee, double caller_rate);

// Weighted least squares y = X·β (normal equations, Gaussian elimination with pivoting).
// Returns false when the system is singular (e.g. every site has the same workload).
bool leastSquares(const std::vector<std::vector<double>>& X, const std::vector<double>& y,
                  const std::vector<double>& w, std::vector<double>& beta);

}  // namespace perfhat::analysis::inference_detail
