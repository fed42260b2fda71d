// `perfhat-experiment stats`: per task and measure, the statistics of the paper's Table II and
// §V-G as the JSON contract of DESIGN §12 / issue #21.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiment/measurements.h"

namespace perfhat::experiment {

// {"results":[{"task","measure","n","mean","sd","shapiro","mann_whitney","cliffs_delta","a12"}]}
// in task order (T1, T2, ..., T10) then measure order (total, fe, rca). Throws InputError, naming
// a line, when a task × measure has fewer than kMinGroupValues values in a group.
nlohmann::ordered_json analyse(const std::vector<Observation>& rows, const std::string& name);

}  // namespace perfhat::experiment
