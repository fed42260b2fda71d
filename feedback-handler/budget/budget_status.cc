#include "feedback-handler/budget/budget_status.h"

#include <cmath>
#include <nlohmann/json.hpp>

namespace perfhat::handler::budget {
namespace {

using nlohmann::json;
using L = StatusLimits;

// The status's numbers: every one optional (absent stays absent), finite, in [0, kMaxValue].
constexpr const char* kTopNumbers[] = {"budget_share",
                                       "detect_ns",
                                       "report_ns",
                                       "counted_ns",
                                       "sample_ns",
                                       "cold_ns",
                                       "collector_fixed_cpu_per_s",
                                       "allowed_cpu_per_s",
                                       "process_cpu_per_s",
                                       "max_probe_hz",
                                       "min_fraction",
                                       "max_f",
                                       "probing_hz",
                                       "value",
                                       "measured_overhead",
                                       "measured_overhead_mean",
                                       "collector_share_mean",
                                       "governor",
                                       "plan_changes",
                                       "window_s",
                                       "sample_weight_s",
                                       "sampling_wall_s"};
constexpr const char* kClassNumbers[] = {"frequency_hz", "duty_ratio", "fraction", "overhead"};
// Optional: an older library's status has no weight, cold entries or detected flag.
constexpr const char* kClassOptionalNumbers[] = {"weight", "cold_hz"};
// The in-probe prices charged and the timed calls behind them (the library's "in_situ" object,
// budget_insitu.h): every member optional, as an older library sends none.
constexpr const char* kInSituNumbers[] = {
    "report_ns",       "request_ns",      "calibrated_report_ns",
    "timed_report_ns", "timed_reports",   "timed_request_ns",
    "timed_requests",  "timed_passed_ns", "timed_passes",
    "dropped",         "fence_ns",        "entry_fence_ns"};
// The last window's prices (ns an event) and its charge by part (CPU seconds), as the library
// measured them (budget_controller_status.cc): every member optional.
constexpr const char* kWindowPriceNumbers[] = {"detect", "report", "counted", "sample", "cold"};
constexpr const char* kWindowCostNumbers[] = {"detect",    "report",  "counted",
                                              "requests",  "passed",  "cold",
                                              "measuring", "samples", "collector"};
constexpr const char* kSampledNumbers[] = {"samples", "self", "estimated_cpu_s",
                                           "estimated_self_cpu_s"};

[[noreturn]] void bad(const std::string& where, const std::string& what) {
  throw StatusError(where + ": " + what);
}

std::string label(const json& o, const char* name, const std::string& where, size_t max,
                  bool required) {
  const auto it = o.find(name);
  if (it == o.end()) {
    if (required) bad(where + name, "is missing");
    return {};
  }
  if (!it->is_string()) bad(where + name, "must be a string");
  std::string s = it->get<std::string>();
  if (required && s.empty()) bad(where + name, "must not be empty");
  if (s.size() > max) bad(where + name, "is longer than " + std::to_string(max) + " bytes");
  for (unsigned char c : s) {
    if (c < 0x20) bad(where + name, "holds a control character");
  }
  return s;
}

// The library's clock when it sent the status (ns since the epoch, beyond kMaxValue).
constexpr double kMaxUnixNs = 9.2e18;

void copyNumber(const json& in, json& out, const char* name, const std::string& where,
                bool required = false, double max = L::kMaxValue) {
  const auto it = in.find(name);
  if (it == in.end()) {
    if (required) bad(where + name, "is missing");
    return;
  }
  const double v = it->is_number() ? it->get<double>() : -1;
  if (!it->is_number() || !std::isfinite(v) || v < 0 || v > max) {
    bad(where + name, max == L::kMaxValue ? "must be a finite number in [0, 1e15]"
                                          : "must be a time in ns since the epoch");
  }
  out[name] = *it;
}

void copyFlag(const json& in, json& out, const char* name, const std::string& where) {
  const auto it = in.find(name);
  if (it == in.end()) return;
  if (!it->is_boolean()) bad(where + name, "must be true or false");
  out[name] = *it;
}

const json& array(const json& in, const char* name, size_t max, bool required) {
  static const json kEmpty = json::array();
  const auto it = in.find(name);
  if (it == in.end()) {
    if (required) bad(name, "is missing");
    return kEmpty;
  }
  if (!it->is_array()) bad(name, "must be an array");
  if (it->size() > max) bad(name, "has more than " + std::to_string(max) + " entries");
  return *it;
}

// The array `name` (at most `max` entries) made of objects, each checked and copied by `entry`,
// which gets the object and the path its errors name ("classes[3].").
template <class Entry>
json objects(const json& in, const char* name, size_t max, bool required, Entry entry) {
  json out = json::array();
  const json& a = array(in, name, max, required);
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string at = std::string(name) + "[" + std::to_string(i) + "]";
    if (!a[i].is_object()) bad(at, "must be an object");
    out.push_back(entry(a[i], at + "."));
  }
  return out;
}

// The optional object `name` of numbers, each checked and copied; absent stays absent.
template <size_t N>
void copyNumbers(const json& in, json& out, const char* name, const char* const (&numbers)[N]) {
  const auto it = in.find(name);
  if (it == in.end()) return;
  if (!it->is_object()) bad(name, "must be an object");
  json o = json::object();
  for (const char* n : numbers) copyNumber(*it, o, n, std::string(name) + ".");
  out[name] = std::move(o);
}

json classes(const json& in) {
  return objects(in, "classes", L::kMaxClasses, true, [](const json& o, const std::string& where) {
    json c = {{"name", label(o, "name", where, L::kMaxNameBytes, true)}};
    for (const char* n : kClassNumbers) copyNumber(o, c, n, where, true);
    for (const char* n : kClassOptionalNumbers) copyNumber(o, c, n, where);
    copyFlag(o, c, "pinned", where);
    copyFlag(o, c, "detected", where);
    copyFlag(o, c, "traced", where);
    if (c.contains("traced") == false) bad(where + "traced", "is missing");
    return c;
  });
}

json sampledFunctions(const json& in) {
  return objects(in, "sampled_functions", L::kMaxSampledFunctions, false,
                 [](const json& o, const std::string& where) {
                   json f = {{"function", label(o, "function", where, L::kMaxNameBytes, true)}};
                   for (const char* n : kSampledNumbers) copyNumber(o, f, n, where, n[0] == 's');
                   return f;
                 });
}

json functions(const json& in) {
  return objects(in, "functions", L::kMaxFunctions, false,
                 [](const json& o, const std::string& where) {
                   return json{{"function", label(o, "function", where, L::kMaxNameBytes, true)},
                               {"class", label(o, "class", where, L::kMaxNameBytes, true)}};
                 });
}

}  // namespace

Status parseStatus(std::string_view body) {
  if (body.size() > L::kMaxBodyBytes) {
    throw StatusError("status is larger than " + std::to_string(L::kMaxBodyBytes) + " bytes");
  }
  // Depth is bounded by refusing anything nested deeper than the format (the parser's callback
  // sees every level before it is built).
  constexpr int kMaxDepth = 4;
  json in = json::parse(
      body, [](int depth, json::parse_event_t, json&) { return depth <= kMaxDepth; }, false);
  if (in.is_discarded()) throw StatusError("status is not JSON (or nested deeper than the format)");
  if (!in.is_object()) throw StatusError("status must be a JSON object");
  Status s;
  s.service = label(in, "service", "", L::kMaxLabelBytes, true);
  s.version = label(in, "version", "", L::kMaxLabelBytes, false);
  s.instance = label(in, "instance", "", L::kMaxLabelBytes, false);
  json out = json::object();
  const std::string mode = label(in, "mode", "", L::kMaxLabelBytes, false);
  if (!mode.empty() && mode != "rates" && mode != "probing") {
    bad("mode", "must be rates or probing, not '" + mode + "'");
  }
  out["mode"] = mode.empty() ? "rates" : mode;
  for (const char* n : kTopNumbers) copyNumber(in, out, n, "");
  copyNumber(in, out, "predicted_overhead", "", true);
  copyNumber(in, out, "sent_unix_ns", "", false, kMaxUnixNs);
  copyFlag(in, out, "over_budget", "");
  copyNumbers(in, out, "in_situ", kInSituNumbers);
  copyNumbers(in, out, "window_price_ns", kWindowPriceNumbers);
  copyNumbers(in, out, "window_cost_s", kWindowCostNumbers);
  out["classes"] = classes(in);
  out["sampled_functions"] = sampledFunctions(in);
  out["functions"] = functions(in);
  s.json = out.dump(-1, ' ', false, json::error_handler_t::replace);
  return s;
}

}  // namespace perfhat::handler::budget
