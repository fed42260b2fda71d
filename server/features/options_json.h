// JSON form of features::Options, as it appears in `.perfhat.json` (under "features") and in the
// LSP initializationOptions. Keys are the field names:
//   {"profile": "design" | "debug", "regression_relative": 0.2, "regression_absolute_ns": 1e6,
//    "learn_thresholds": true, "learned_relative_max": 2.0, "hotspot_diagnostics": false,
//    "hotspot_share": 0.5, "design_min_share": 0.1, "main_statistic": "p50" | "mean" | "p90" |
//    "p99"}
// Each key may also be spelled in camelCase ("regressionRelative"), as editor settings are.
// Missing keys keep their current value (from_json fills an Options that already holds the
// defaults or a lower-precedence layer), unknown keys are ignored so newer configs still load.
#pragma once

#include <stdexcept>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "server/features/features.h"

namespace perfhat::features {

// Thrown on a wrong type or an out-of-range value, with a message naming the key.
class OptionsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

void to_json(nlohmann::json& j, const Options& o);
void from_json(const nlohmann::json& j, Options& o);  // throws OptionsError

// Parses a JSON text over `base` (defaults when omitted). Throws OptionsError on malformed JSON.
Options parseOptions(std::string_view text, const Options& base = Options());

std::string_view profileName(Profile p);

}  // namespace perfhat::features
