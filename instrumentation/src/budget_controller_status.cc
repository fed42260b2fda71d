// What the controller shows other threads: its plan, costs, sampled functions and settings, and
// its status document (perfhat-handler's collection-budget view reads it): the plan, the costs
// it was priced with, the last window's charge and the sampled functions.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>

#include "budget_controller.h"
#include "json_text.h"

namespace perfhat::budget {
namespace {

std::string num(double v) {
  if (!std::isfinite(v)) return "0";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

constexpr std::size_t kMaxStatusRows = 200;

}  // namespace

std::string Controller::status_json(bool without_sampled) const {
  detail::Lock l(mu_);
  return status_json_locked(without_sampled);
}

std::string Controller::status_json_locked(bool without_sampled) const {
  const Plan& p = planner_.plan();
  // The prices the plan was solved with (the planner's sliding means): the editor re-solves the
  // plan with them, and with the last window's its "plan before" differed from the running one.
  const Costs& c = p.costs;
  std::vector<SampledFunction> functions;
  if (!without_sampled)
    for (const auto& [fn, f] : sampled_) functions.push_back(f);
  std::sort(
      functions.begin(), functions.end(),
      [](const SampledFunction& a, const SampledFunction& b) { return a.samples > b.samples; });
  std::string o = "{\"budget_share\":" + num(settings_.planner.budget_share);
  o += ",\"mode\":" + json_quoted(p.probing ? "probing" : "rates");
  o += ",\"detect_ns\":" + num(c.detect_s * 1e9) + ",\"report_ns\":" + num(c.report_s * 1e9) +
       ",\"counted_ns\":" + num(c.counted_s * 1e9) + ",\"sample_ns\":" + num(c.sample_s * 1e9);
  o += ",\"cold_ns\":" + num(c.cold_s * 1e9);
  // The last window's prices, as the controller measured them.
  o += ",\"window_price_ns\":{\"detect\":" + num(costs_.detect_s * 1e9) +
       ",\"report\":" + num(costs_.report_s * 1e9) + ",\"counted\":" + num(costs_.counted_s * 1e9) +
       ",\"sample\":" + num(costs_.sample_s * 1e9) + ",\"cold\":" + num(costs_.cold_s * 1e9) + "}";
  // The in-probe prices charged (in situ once enough calls were timed, else the calibration's),
  // the timed calls' means and counts over the sliding window (budget_insitu.h).
  o += ",\"in_situ\":{\"report_ns\":" + num(inprobe_report_s_ * 1e9) +
       ",\"request_ns\":" + num(request_s_ * 1e9) +
       ",\"calibrated_report_ns\":" + num(calibrated_report_s_ * 1e9) +
       ",\"timed_report_ns\":" + num(insitu_.mean_s(detail::kSelfTimedRecord) * 1e9) +
       ",\"timed_reports\":" + std::to_string(insitu_.calls(detail::kSelfTimedRecord)) +
       ",\"timed_request_ns\":" + num(insitu_.mean_s(detail::kSelfTimedRequest) * 1e9) +
       ",\"timed_requests\":" + std::to_string(insitu_.calls(detail::kSelfTimedRequest)) +
       ",\"timed_passed_ns\":" + num(insitu_.mean_s(detail::kSelfTimedPassed) * 1e9) +
       ",\"timed_passes\":" + std::to_string(insitu_.calls(detail::kSelfTimedPassed)) +
       ",\"dropped\":" + std::to_string(insitu_.dropped()) + ",\"fence_ns\":" + num(fence_ns_) +
       ",\"entry_fence_ns\":" + num(entry_fence_ns_) + "}";
  o += ",\"collector_fixed_cpu_per_s\":" + num(collector_fit_.fixed_per_s());
  // The last window's charge, part by part, in CPU seconds (budget_cost_account.h).
  const CostParts& w = last_parts_;
  o += ",\"window_cost_s\":{\"detect\":" + num(w.detect_s) + ",\"report\":" + num(w.report_s) +
       ",\"counted\":" + num(w.counted_s) + ",\"requests\":" + num(w.requests_s) +
       ",\"passed\":" + num(w.passed_s) + ",\"cold\":" + num(w.cold_s) +
       ",\"measuring\":" + num(w.measuring_s) + ",\"samples\":" + num(w.samples_s) +
       ",\"collector\":" + num(std::max(0.0, w.collector_s)) + "}";
  o += ",\"allowed_cpu_per_s\":" + num(p.allowed_cpu_per_s) +
       ",\"process_cpu_per_s\":" + num(p.process_cpu_per_s) +
       ",\"max_probe_hz\":" + num(settings_.planner.max_probe_hz) +
       ",\"min_fraction\":" + num(settings_.planner.min_fraction);
  o += ",\"max_f\":" + num(p.max_f) + ",\"probing_hz\":" + num(p.probing_hz);
  o += ",\"value\":" + num(p.value) + ",\"predicted_overhead\":" + num(p.predicted_overhead);
  o += ",\"measured_overhead\":" + num(p.measured_overhead) +
       ",\"measured_overhead_mean\":" + num(p.measured_overhead_mean) +
       ",\"collector_share_mean\":" + num(p.collector_share_mean) +
       ",\"governor\":" + num(p.governor);
  o += ",\"over_budget\":" + std::string(p.over_budget ? "true" : "false");
  o += ",\"plan_changes\":" + std::to_string(p.changes) + ",\"classes\":[";
  for (std::size_t i = 0; i < p.classes.size(); ++i) {
    const ClassPlan& k = p.classes[i];
    if (i) o += ',';
    o += "{\"name\":" + json_quoted(k.name) + ",\"frequency_hz\":" + num(k.frequency_hz) +
         ",\"duty_ratio\":" + num(k.duty_ratio) + ",\"weight\":" + num(k.weight) +
         ",\"pinned\":" + (k.pinned ? "true" : "false") +
         ",\"traced\":" + (k.traced ? "true" : "false") +
         ",\"detected\":" + (k.detected ? "true" : "false") + ",\"cold_hz\":" + num(k.cold_hz) +
         ",\"fraction\":" + num(k.fraction) + ",\"overhead\":" + num(k.overhead) + "}";
  }
  // Each stack sample stands for 1 / probing_hz seconds of process CPU.
  o += "],\"sample_weight_s\":" + num(p.probing_hz > 0 ? 1.0 / p.probing_hz : 0);
  if (!without_sampled) {
    o += ",\"sampled_functions\":[";
    for (std::size_t i = 0; i < functions.size() && i < kMaxStatusRows; ++i) {
      if (i) o += ',';
      o += "{\"function\":" + json_quoted(functions[i].function) +
           ",\"samples\":" + std::to_string(functions[i].samples) +
           ",\"self\":" + std::to_string(functions[i].self) + "}";
    }
    o += ']';
  }
  o += ",\"functions\":[";  // which class each probed function is in (the editor's lens)
  std::size_t n = 0;
  for (const auto& [id, st] : sites_) {
    (void)id;
    if (st.klass < 0 || static_cast<std::size_t>(st.klass) >= class_names_.size()) continue;
    if (n == kMaxStatusRows * 10) break;
    if (n++) o += ',';
    o += "{\"function\":" + json_quoted(st.qualified) +
         ",\"class\":" + json_quoted(class_names_[st.klass]) + "}";
  }
  o += "]}";
  return o;
}

void Controller::write_status() {
  if (settings_.status_file.empty()) return;
  const std::string json = status_json_locked();
  const std::string tmp = settings_.status_file + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << json << '\n';
    if (!out) return;
  }
  std::rename(tmp.c_str(), settings_.status_file.c_str());
}

Plan Controller::plan() const {
  detail::Lock l(mu_);
  return planner_.plan();
}

Costs Controller::costs() const {
  detail::Lock l(mu_);
  return costs_;
}

std::vector<SampledFunction> Controller::sampled() const {
  detail::Lock l(mu_);
  std::vector<SampledFunction> out;
  for (const auto& [fn, f] : sampled_) out.push_back(f);
  std::sort(out.begin(), out.end(), [](const SampledFunction& a, const SampledFunction& b) {
    return a.samples > b.samples;
  });
  return out;
}

std::size_t Controller::windows_setting() const {
  detail::Lock l(mu_);
  return settings_.planner.windows;
}

}  // namespace perfhat::budget
