#include "budget_cost_account.h"

#include <algorithm>

namespace perfhat::budget {

CostParts accountWindow(const WindowCounts& w, const Costs& c, double report_in_probe_s,
                        double request_s) {
  CostParts p;
  p.detect_s = w.detected * c.detect_s;
  p.report_s = w.recorded * report_in_probe_s;
  p.counted_s = std::max(0.0, w.counted_unrecorded) * std::max(0.0, c.counted_s - c.detect_s);
  // A request context opened and closed (two clock reads, ids, the sampler).
  p.requests_s = w.request_roots_taken * request_s;
  p.passed_s = std::max(0.0, w.passed_entries_s);
  p.cold_s = w.cold_entries * c.cold_s;
  p.measuring_s = w.measuring_s;
  p.samples_s = w.sample_cpu_s;
  p.collector_s = w.collector_cpu_s;
  return p;
}

double coldEntries(const std::vector<double>& site_calls, double request_roots) {
  if (request_roots <= 0) return 0;
  double cold = 0;
  for (double calls : site_calls) cold += std::min(std::max(calls, 0.0), request_roots);
  return cold;
}

}  // namespace perfhat::budget
