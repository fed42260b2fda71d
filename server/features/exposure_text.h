// The words for exposure under probe distribution (issue 23; docs/plan.md "Exposure"): how much
// of the fleet a function's production data comes from, and a function no variant probed.
#pragma once

#include <string>

#include "common/feedback.h"

namespace perfhat::features {

// "observed on 9 of 36 replicas, 24 % of traffic"
std::string exposureSummary(const Exposure& e);
// True when no variant of the window's releases probed the function: its lack of data is not
// "no data".
inline bool unprobed(const Exposure& e) { return e.replicas > 0 && e.replicas_probed == 0; }
// "not probed in release r7: no variant of its 36 replicas carries this probe"
std::string unprobedText(const Exposure& e);
// The hover's table row(s), "" when there is nothing to say.
std::string exposureRows(const Exposure& e);

}  // namespace perfhat::features
