// The JSON that `perfhat-plan budget` prints: the chosen plan (traced set, per-class rates,
// information value) and the best alternatives with their values.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "plan/budget.h"

namespace perfhat::plan {

// Base case. "traced": classes reported in full; "sampled": reported at a fraction;
// "alternatives": the best plans that report one more class in full ("pinned").
nlohmann::ordered_json rateReport(const std::vector<EventClass>& classes, double max_f,
                                  const RatePlan& plan,
                                  const std::vector<PinnedRatePlan>& alternatives);

// Probing case. Per class: traced (rate = F_i) or sampled by the probe (expected hits
// F_probing·r_i).
nlohmann::ordered_json probeReport(const std::vector<EventClass>& classes, double max_f,
                                   const ProbeResult& result);

}  // namespace perfhat::plan
