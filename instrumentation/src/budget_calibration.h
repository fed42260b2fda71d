// Start-up micro-calibration of the collection budget's per-event costs with the real probe
// code: detection (a call counted, not recorded) and report (a call recorded as a span or an
// aggregate record), on a thread state and slots of its own so nothing it does is counted or
// exported. The export side of a report is measured online (the exporter thread's CPU per
// recorded call, budget_controller).
#pragma once

#include "budget_planner.h"

namespace perfhat::budget {

// Probes must be enabled (the real code runs); otherwise {0, 0}.
Costs calibrateProbeCosts(double ns_per_tick);

}  // namespace perfhat::budget
