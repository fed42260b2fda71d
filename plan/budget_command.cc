// perfhat-plan budget: reads the classes, turns the budget into MaxF and solves.
#include <cmath>
#include <cstdio>
#include <iostream>

#include "plan/budget.h"
#include "plan/budget_report.h"
#include "plan/classes_file.h"
#include "plan/commands.h"

namespace perfhat::plan {
namespace {

constexpr double kMaxF = 1e12;      // reported events per second: beyond any machine
constexpr double kMaxCostNs = 1e9;  // one second per event

int fail(const std::string& message) {
  std::fprintf(stderr, "perfhat-plan budget: %s\n", message.c_str());
  return 2;
}

bool inRange(double v, double lo, double hi) { return std::isfinite(v) && v >= lo && v <= hi; }

// MaxF from the overhead budget (seed 002 §4.3): in the base case every event is detected and
// only the reported share costs T_report, so MaxF = (X − ΣF·T_detect) / T_report; with a probe,
// a traced event and a probe each cost detection plus report, so MaxF = X / (T_detect + T_report).
std::string maxFromOverhead(const BudgetOptions& o, const std::vector<EventClass>& classes,
                            double& max_f) {
  double x = *o.max_overhead, detect = *o.detect_cost_ns * 1e-9, report = *o.report_cost_ns * 1e-9;
  if (o.probing) {
    max_f = x / (detect + report);
    return "";
  }
  double detect_all = 0;
  for (const EventClass& c : classes) detect_all += c.frequency_hz * detect;
  if (detect_all >= x) {
    char buf[160];
    std::snprintf(buf, sizeof buf,
                  "detecting every event alone costs %.4g of the CPU, the budget is %.4g: "
                  "raise --max-overhead or use --probing",
                  detect_all, x);
    return buf;
  }
  max_f = (x - detect_all) / report;
  return "";
}

}  // namespace

int runBudget(const BudgetOptions& o) {
  if (o.max_f.has_value() == o.max_overhead.has_value())
    return fail(
        "give either --max-f N or --max-overhead X (with --detect-cost-ns and "
        "--report-cost-ns)");
  if (o.max_f && !inRange(*o.max_f, 0, kMaxF))
    return fail("--max-f must be a number of events per second in [0, 1e12]");
  if (o.max_overhead) {
    if (!o.detect_cost_ns || !o.report_cost_ns)
      return fail("--max-overhead needs --detect-cost-ns and --report-cost-ns");
    if (!inRange(*o.max_overhead, 0, 1) || *o.max_overhead <= 0 || *o.max_overhead >= 1)
      return fail("--max-overhead is the extra CPU share allowed, in (0, 1): 0.05 for 5 %");
    if (!inRange(*o.detect_cost_ns, 0, kMaxCostNs))
      return fail("--detect-cost-ns must be in [0, 1e9]");
    if (!inRange(*o.report_cost_ns, 0, kMaxCostNs) || *o.report_cost_ns <= 0)
      return fail("--report-cost-ns must be in (0, 1e9]");
  }
  if (o.local_search && !o.probing) return fail("--local-search applies to --probing only");
  ClassFile file = readClassFile(o.classes_path);
  if (!file.ok()) return fail(file.error);
  double max_f = o.max_f.value_or(0);
  if (o.max_overhead) {
    if (std::string e = maxFromOverhead(o, file.classes, max_f); !e.empty()) return fail(e);
  }
  nlohmann::ordered_json report;
  if (o.probing) {
    report = probeReport(file.classes, max_f, solveProbing(file.classes, max_f, o.local_search));
  } else {
    RatePlan plan;
    if (!solveRates(file.classes, max_f, plan))
      return fail("the classes' min_rate_hz add up to more than the budget of " +
                  std::to_string(max_f) + " events/s");
    report = rateReport(file.classes, max_f, plan,
                        pinnedRateAlternatives(file.classes, max_f, plan, kAlternatives));
  }
  std::cout << report.dump(2) << '\n';
  return 0;
}

}  // namespace perfhat::plan
