#include "server/analysis/options.h"

#include <re2/re2.h>
#include <nlohmann/json.hpp>

#include "common/json_parse.h"

namespace perfhat::analysis {

void to_json(nlohmann::json& j, const MatchRule& v) {
  j = nlohmann::json::object();
  if (!v.span.empty()) j["span"] = v.span;
  if (!v.function.empty()) j["function"] = v.function;
  if (!v.function_regex.empty()) j["function_regex"] = v.function_regex;
}

Result<std::shared_ptr<const re2::RE2>> compileFunctionRegex(const std::string& pattern) {
  RE2::Options options;
  options.set_log_errors(false);  // the error is reported to the user, not to stderr
  options.set_max_mem(MatchRule::kMaxRegexMemory);
  auto re = std::make_shared<const re2::RE2>(pattern, options);
  if (!re->ok()) return Result<std::shared_ptr<const re2::RE2>>::failure(re->error());
  return Result<std::shared_ptr<const re2::RE2>>::success(std::move(re));
}

void from_json(const nlohmann::json& j, MatchRule& v) {
  if (!j.is_object()) throw OptionsError("rule: expected an object");
  auto str = [&](const char* name, std::string& out) {
    if (!j.contains(name)) return;
    if (!j[name].is_string())
      throw OptionsError(std::string("rule.") + name + ": expected a string");
    out = j[name].get<std::string>();
  };
  str("span", v.span);
  str("function", v.function);
  str("function_regex", v.function_regex);
  if (v.span.empty()) throw OptionsError("rule.span: required");
  if (v.function.empty() == v.function_regex.empty())
    throw OptionsError("rule: exactly one of function / function_regex is required");
  if (!v.function_regex.empty()) {
    if (auto re = compileFunctionRegex(v.function_regex); !re)
      throw OptionsError("rule.function_regex: invalid regular expression: " + re.error);
  }
}

void to_json(nlohmann::json& j, const AnalysisOptions& v) {
  j = nlohmann::json{{"default_loop_iterations", v.default_loop_iterations},
                     {"branch_mode", v.branch_mode == BranchMode::Worst ? "worst" : "mean"},
                     {"rules", v.rules},
                     {"workspace_root", v.workspace_root},
                     {"fallback_flags", v.fallback_flags},
                     {"compile_commands", v.compile_commands},
                     {"show_do_while_zero", v.show_do_while_zero},
                     {"max_nesting_depth", v.max_nesting_depth},
                     {"max_body_depth", v.max_body_depth},
                     {"deployed_revision", v.deployed_revision},
                     {"assumption_ranges",
                      {{"default_iterations_low", v.default_iterations_low},
                       {"default_iterations_high", v.default_iterations_high},
                       {"branch_prior_low", v.branch_prior_low},
                       {"branch_prior_high", v.branch_prior_high},
                       {"dataflow_low", v.dataflow_low},
                       {"one_input_size_spread", v.one_input_size_spread},
                       {"z", v.interval_z},
                       {"drift", v.drift_share},
                       {"context_bimodal_ratio", v.context_bimodal_ratio}}}};
}

void from_json(const nlohmann::json& j, AnalysisOptions& v) {
  if (!j.is_object()) throw OptionsError("analysis options: expected an object");
  if (j.contains("default_loop_iterations")) {
    const auto& n = j["default_loop_iterations"];
    if (!n.is_number() || n.get<double>() <= 0 || !(n.get<double>() < 1e12))
      throw OptionsError("default_loop_iterations: expected a positive number");
    v.default_loop_iterations = n.get<double>();
  }
  if (j.contains("assumption_ranges")) {
    const auto& r = j["assumption_ranges"];
    if (!r.is_object()) throw OptionsError("assumption_ranges: expected an object");
    auto factor = [&](const char* name, double& out, double lo, double hi) {
      if (!r.contains(name)) return;
      const auto& n = r[name];
      if (!n.is_number() || !(n.get<double>() >= lo) || !(n.get<double>() <= hi))
        throw OptionsError(std::string("assumption_ranges.") + name + ": expected a number from " +
                           std::to_string(lo) + " to " + std::to_string(hi));
      out = n.get<double>();
    };
    factor("default_iterations_low", v.default_iterations_low, 0, 1);
    factor("default_iterations_high", v.default_iterations_high, 1, 1e6);
    factor("branch_prior_low", v.branch_prior_low, 0, 1);
    factor("branch_prior_high", v.branch_prior_high, 1, 1e6);
    factor("dataflow_low", v.dataflow_low, 0, 1);
    factor("one_input_size_spread", v.one_input_size_spread, 1, 1e6);
    factor("z", v.interval_z, 0, 10);
    factor("drift", v.drift_share, 0, 1);
    factor("context_bimodal_ratio", v.context_bimodal_ratio, 1, 1e6);
  }
  if (j.contains("branch_mode")) {
    const auto& m = j["branch_mode"];
    if (m == "mean")
      v.branch_mode = BranchMode::Mean;
    else if (m == "worst")
      v.branch_mode = BranchMode::Worst;
    else
      throw OptionsError("branch_mode: expected \"mean\" or \"worst\"");
  }
  if (j.contains("rules")) {
    if (!j["rules"].is_array()) throw OptionsError("rules: expected an array");
    v.rules.clear();
    for (size_t i = 0; i < j["rules"].size(); ++i) {
      try {
        v.rules.push_back(j["rules"][i].get<MatchRule>());
      } catch (const OptionsError& e) {  // which rule, for a file with many
        throw OptionsError("rules[" + std::to_string(i) + "]: " + e.what());
      }
    }
  }
  auto str = [&](const char* name, std::string& out) {
    if (!j.contains(name)) return;
    if (!j[name].is_string()) throw OptionsError(std::string(name) + ": expected a string");
    out = j[name].get<std::string>();
  };
  str("workspace_root", v.workspace_root);
  str("compile_commands", v.compile_commands);
  str("deployed_revision", v.deployed_revision);
  if (j.contains("fallback_flags")) {
    const auto& f = j["fallback_flags"];
    if (!f.is_array()) throw OptionsError("fallback_flags: expected an array of strings");
    v.fallback_flags.clear();
    for (const auto& s : f) {
      if (!s.is_string()) throw OptionsError("fallback_flags: expected an array of strings");
      v.fallback_flags.push_back(s.get<std::string>());
    }
  }
  if (j.contains("show_do_while_zero")) {
    if (!j["show_do_while_zero"].is_boolean())
      throw OptionsError("show_do_while_zero: expected a boolean");
    v.show_do_while_zero = j["show_do_while_zero"].get<bool>();
  }
  auto depth = [&](const char* name, int& out) {
    if (!j.contains(name)) return;
    const auto& n = j[name];
    if (!n.is_number_integer() || n.get<int64_t>() < 1 || n.get<int64_t>() > 100'000)
      throw OptionsError(std::string(name) + ": expected an integer from 1 to 100000");
    out = static_cast<int>(n.get<int64_t>());
  };
  depth("max_nesting_depth", v.max_nesting_depth);
  depth("max_body_depth", v.max_body_depth);
}

AnalysisOptions parseAnalysisOptions(std::string_view text) {
  JsonParse parsed = parseJson(text);
  if (!parsed.ok()) throw OptionsError("analysis options: malformed JSON (" + parsed.error + ")");
  const nlohmann::json& j = parsed.value;
  AnalysisOptions o;
  try {
    from_json(j, o);
  } catch (const nlohmann::json::exception& e) {
    throw OptionsError(std::string("analysis options: ") + e.what());
  }
  return o;
}

}  // namespace perfhat::analysis
