// The editor's side of libperfhat's collection budget (docs/collection-budget.md): the plan a
// service exports (its status JSON), re-solved here with the library's own solve step
// (instrumentation/src/budget_planner.cc) when the user pins a function "always trace" or
// raises a class's importance, and the pins file the library re-reads.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "instrumentation/src/budget_planner.h"

namespace perfhat::collection_budget {

// A status document that is not one libperfhat writes: the message names the field.
class StatusError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// What probing mode's stack samples say of one function (its class is not traced): CPU time
// estimated from samples, not measured calls. Sent by the library to the handler
// (estimated_cpu_s); in a status file, samples × sample_weight_s.
struct SampledEstimate {
  std::string function;  // as the symboliser names it (a signature or a qualified name)
  double samples = 0, self = 0;
  double cpu_s = 0, self_cpu_s = 0;  // estimated process CPU seconds, inclusive and self
};

struct Status {
  budget::Plan plan;  // classes with their measured frequency, duty ratio, weight and share
  double budget_share = 0;
  double detect_ns = 0, report_ns = 0;
  // The library's measured price of one stack sample (probing) and of a counted call; 0 when the
  // status has none (an older library): a sample is then priced as a traced event.
  double sample_ns = 0, counted_ns = 0;
  // A cold probe entry's price (rates mode plans each class's cold entries with it); 0 when an
  // older library's status has none.
  double cold_ns = 0;
  double max_probe_hz = 1000, min_fraction = 0.001;
  std::vector<std::pair<std::string, std::string>> functions;  // qualified function → class
  std::vector<SampledEstimate> sampled;                        // probing mode, most samples first
  double sampling_wall_s = 0;  // wall time the estimates cover (0: unknown)
};

// The stack-sample estimate of `function` (a qualified name or a signature), or nullptr.
const SampledEstimate* sampledOf(const Status& s, const std::string& function);

// {"sampled_functions": [{"function","samples","estimated_cpu_s","estimated_self_cpu_s",
// "cpu_per_s" (when the covered time is known),"estimated":"from stack samples"}]}.
nlohmann::json sampledJson(const Status& s);

// Reads libperfhat's status JSON (PERFHAT_BUDGET_STATUS). Throws StatusError.
Status parseStatus(const nlohmann::json& j);

// What the user asks for: pin a function "always trace", or set a class's importance.
struct Change {
  enum class Kind { kAlways, kWeight };
  Kind kind = Kind::kAlways;
  std::string target;  // kAlways: a function (or glob); kWeight: a class name
  double weight = 1;   // kWeight: in [0, 1e9]
};

// "shop::Cart::sum" for "double shop::Cart::sum() const": how the status names functions.
std::string qualifiedName(std::string_view signature);

// The class a function's calls are counted in ("" when the status does not list it); `function`
// is a qualified name or a signature.
std::string classOf(const Status& s, const std::string& function);

// The plan the library will adopt after `change`, from the exported class statistics and the
// same budget, costs and solver. A pinned function is predicted as its whole class traced: an
// upper bound until the library measures the function's own class (always:GLOB).
// Throws StatusError when the function or class is not in the status.
budget::Plan replan(const Status& s, const Change& change);

// {"mode", "predicted_overhead", "over_budget", "max_f", "probing_hz", "value", "classes":[…]}.
nlohmann::json planJson(const budget::Plan& p);

// The pins-file line for `change` ("always GLOB" or "weight CLASS W"); throws StatusError for a
// target the file format cannot carry (a newline, '#', a class name with spaces).
std::string pinLine(const Change& change);

// Adds `change` to the pins file at `path`, replacing an earlier line for the same target,
// written to a temporary file and renamed so the library never reads half a file. Throws
// std::runtime_error naming the path when it cannot.
void writePin(const std::string& path, const Change& change);

}  // namespace perfhat::collection_budget
