#include "plan/budget_report.h"

namespace perfhat::plan {
namespace {

nlohmann::ordered_json namesWhere(const std::vector<EventClass>& classes,
                                  const std::vector<bool>& pick) {
  nlohmann::ordered_json names = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < classes.size(); ++i)
    if (pick[i]) names.push_back(classes[i].name);
  return names;
}

std::vector<bool> fullyReported(const RatePlan& plan) {
  std::vector<bool> full(plan.fraction.size());
  for (std::size_t i = 0; i < full.size(); ++i) full[i] = plan.fraction[i] >= 1.0;
  return full;
}

nlohmann::ordered_json probeSummary(const std::vector<EventClass>& classes, const ProbePlan& p) {
  return {{"traced", namesWhere(classes, p.traced)},
          {"probing_hz", p.probing_hz},
          {"information_value", p.value}};
}

const char* methodName(const ProbeResult& r) {
  if (r.method == ProbeMethod::kExact) return "exact";
  return r.local_search ? "half-approximation+local-search" : "half-approximation";
}

}  // namespace

nlohmann::ordered_json rateReport(const std::vector<EventClass>& classes, double max_f,
                                  const RatePlan& plan,
                                  const std::vector<PinnedRatePlan>& alternatives) {
  nlohmann::ordered_json rates = nlohmann::ordered_json::array();
  std::vector<bool> sampled(classes.size());
  for (std::size_t i = 0; i < classes.size(); ++i) {
    const EventClass& c = classes[i];
    double x = plan.fraction[i];
    sampled[i] = x > 0 && x < 1.0;
    rates.push_back({{"name", c.name},
                     {"traced", x >= 1.0},
                     {"fraction", x},
                     {"rate_hz", x * c.frequency_hz},
                     {"frequency_hz", c.frequency_hz},
                     {"weight", c.weight}});
  }
  nlohmann::ordered_json alts = nlohmann::ordered_json::array();
  for (const PinnedRatePlan& a : alternatives)
    alts.push_back({{"pinned", classes[a.pinned].name},
                    {"traced", namesWhere(classes, fullyReported(a.plan))},
                    {"information_value", a.plan.value}});
  return {{"mode", "rates"},
          {"method", "greedy"},
          {"max_f", max_f},
          {"traced", namesWhere(classes, fullyReported(plan))},
          {"sampled", namesWhere(classes, sampled)},
          {"rates", rates},
          {"information_value", plan.value},
          {"alternatives", alts}};
}

nlohmann::ordered_json probeReport(const std::vector<EventClass>& classes, double max_f,
                                   const ProbeResult& result) {
  const ProbePlan& best = result.best;
  nlohmann::ordered_json rates = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < classes.size(); ++i) {
    const EventClass& c = classes[i];
    bool traced = best.traced[i];
    rates.push_back({{"name", c.name},
                     {"traced", traced},
                     {"rate_hz", traced ? c.frequency_hz : best.probing_hz * c.duty_ratio},
                     {"frequency_hz", c.frequency_hz},
                     {"duty_ratio", c.duty_ratio},
                     {"weight", c.weight}});
  }
  std::vector<bool> sampled(best.traced.size());
  for (std::size_t i = 0; i < sampled.size(); ++i) sampled[i] = !best.traced[i];
  nlohmann::ordered_json alts = nlohmann::ordered_json::array();
  for (const ProbePlan& a : result.alternatives) alts.push_back(probeSummary(classes, a));
  return {{"mode", "probing"},
          {"method", methodName(result)},
          {"max_f", max_f},
          {"traced", namesWhere(classes, best.traced)},
          {"sampled", namesWhere(classes, sampled)},
          {"probing_hz", best.probing_hz},
          {"rates", rates},
          {"information_value", best.value},
          {"alternatives", alts}};
}

}  // namespace perfhat::plan
