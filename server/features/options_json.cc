#include "server/features/options_json.h"

#include <cctype>
#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "common/json_parse.h"

namespace perfhat::features {
namespace {

using nlohmann::json;

// The key as written (snake_case, the field name) or its camelCase spelling, which is what
// editor settings (VS Code, initializationOptions) conventionally use: "regressionRelative".
json::const_iterator lookup(const json& j, const char* key) {
  auto it = j.find(key);
  if (it != j.end()) return it;
  std::string camel;
  for (const char* c = key; *c; ++c) {
    if (*c == '_' && c[1]) {
      camel += static_cast<char>(std::toupper(static_cast<unsigned char>(*++c)));
    } else {
      camel += *c;
    }
  }
  return j.find(camel);
}

double number(const json& j, const char* key, double lo, double hi, double current) {
  const auto it = lookup(j, key);
  if (it == j.end() || it->is_null()) return current;
  if (!it->is_number())
    throw OptionsError(std::string("features option '") + key + "' must be a number, got " +
                       it->type_name());
  const double v = it->get<double>();
  if (!std::isfinite(v) || v < lo || v > hi) {
    throw OptionsError(std::string("features option '") + key + "' = " + it->dump() +
                       " is out of range [" + json(lo).dump() + ", " + json(hi).dump() + "]");
  }
  return v;
}

bool boolean(const json& j, const char* key, bool current) {
  const auto it = lookup(j, key);
  if (it == j.end() || it->is_null()) return current;
  if (!it->is_boolean())
    throw OptionsError(std::string("features option '") + key + "' must be true or false, got " +
                       it->type_name());
  return it->get<bool>();
}

std::string text(const json& j, const char* key, const std::string& current) {
  const auto it = lookup(j, key);
  if (it == j.end() || it->is_null()) return current;
  if (!it->is_string())
    throw OptionsError(std::string("features option '") + key + "' must be a string, got " +
                       it->type_name());
  return it->get<std::string>();
}

}  // namespace

std::string_view profileName(Profile p) { return p == Profile::Design ? "design" : "debug"; }

void to_json(json& j, const Options& o) {
  j = json{{"profile", profileName(o.profile)},
           {"regression_relative", o.regression_relative},
           {"regression_absolute_ns", o.regression_absolute_ns},
           {"learn_thresholds", o.learn_thresholds},
           {"learned_relative_max", o.learned_relative_max},
           {"hotspot_diagnostics", o.hotspot_diagnostics},
           {"hotspot_share", o.hotspot_share},
           {"design_min_share", o.design_min_share},
           {"main_statistic", o.main_statistic}};
}

void from_json(const json& j, Options& o) {
  if (!j.is_object()) {
    throw OptionsError(std::string("features options must be a JSON object, got ") + j.type_name());
  }
  Options r = o;  // assign only when everything validated: no half-applied configuration
  const std::string profile = text(j, "profile", std::string(profileName(o.profile)));
  if (profile == "design") {
    r.profile = Profile::Design;
  } else if (profile == "debug") {
    r.profile = Profile::Debug;
  } else {
    throw OptionsError("features option 'profile' must be \"design\" or \"debug\", got \"" +
                       profile + "\"");
  }
  constexpr double kHuge = 1e18;
  r.regression_relative = number(j, "regression_relative", 0, kHuge, o.regression_relative);
  r.regression_absolute_ns =
      number(j, "regression_absolute_ns", 0, kHuge, o.regression_absolute_ns);
  r.learn_thresholds = boolean(j, "learn_thresholds", o.learn_thresholds);
  r.learned_relative_max = number(j, "learned_relative_max", 0, kHuge, o.learned_relative_max);
  r.hotspot_diagnostics = boolean(j, "hotspot_diagnostics", o.hotspot_diagnostics);
  r.hotspot_share = number(j, "hotspot_share", 0, 1, o.hotspot_share);
  r.design_min_share = number(j, "design_min_share", 0, 1, o.design_min_share);
  r.main_statistic = text(j, "main_statistic", o.main_statistic);
  if (r.main_statistic != "p50" && r.main_statistic != "mean" && r.main_statistic != "p90" &&
      r.main_statistic != "p99") {
    throw OptionsError(
        "features option 'main_statistic' must be \"p50\", \"mean\", \"p90\" or "
        "\"p99\", got \"" +
        r.main_statistic + "\"");
  }
  o = std::move(r);
}

Options parseOptions(std::string_view text, const Options& base) {
  JsonParse parsed = parseJson(text);
  if (!parsed.ok()) throw OptionsError("features options: malformed JSON (" + parsed.error + ")");
  const json& j = parsed.value;
  Options o = base;
  from_json(j, o);
  return o;
}

}  // namespace perfhat::features
