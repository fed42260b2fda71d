// Start-up micro-calibration of the collection budget's per-event costs with the real probe
// code: detection (a call counted, not recorded) and report (a call recorded as a span or an
// aggregate record), on a thread state and slots of its own so nothing it does is counted or
// exported. The export side of a report is measured online (the exporter thread's CPU per
// recorded call, budget_controller).
#pragma once

#include <cstdint>

#include "budget_planner.h"
#include "probe_calibration.h"

namespace perfhat::budget {

// Probes must be enabled (the real code runs); otherwise {0, 0}. Detection is a call the budget
// passes over (inside a skip run), the cost every call pays; report is what a recorded call costs
// on top; counted is a call that is neither skipped nor recorded (the request sampler's).
// `free_site`: a site id above every registered one; the calibration's own probe uses it, and a
// budget table that leaves it out is published while it runs.
Costs calibrateProbeCosts(double ns_per_tick, uint32_t free_site);
// The same calibration's raw result: per kind, fixed-point ticks (probe_calibration.h). kSkipped
// is a call the budget passes over. Publishes budget tables while it runs (the plan's rates plus
// its own site) and then restores the table published before it.
autoinstrument::ProbeCosts calibrateMacroProbe(uint32_t free_site);
// A call the budget passes over, timed alone right after its lines were evicted (what a site's
// first call in a request costs, budget_cold_calibration.h), in clock ticks; 0 with probes off.
double coldDetectTicks(uint32_t free_site);

}  // namespace perfhat::budget
