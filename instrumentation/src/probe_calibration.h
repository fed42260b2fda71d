// Overhead compensation for automatic instrumentation: what one instrumented call's probe costs,
// measured once at start-up per kind of call, so an enclosing call's measured duration can be
// reported without the probes of the calls nested in it (a 3 µs operation with a thousand
// instrumented callees otherwise reports tens of µs).
#pragma once

#include <cstdint>

namespace perfhat::autoinstrument {

// What an instrumented call's probe did, cheapest first.
enum ProbeKind : uint8_t {
  kSkipped = 0,  // outside the scope (or too deep): the hooks only
  kCounted,      // phase 1: counted, not timed, without a probe (the hooks' count_only)
  // Counted, not timed, by a probe: a relevant site's call the sampler did not draw (count_only
  // leaves relevant sites to the probe). Its own cost, not kCounted's: the probe's path costs
  // more, and in phase 2 it is every unsampled call of the sites that matter most.
  kCountedFull,
  kClocked,   // timed (two clock reads), not recorded
  kRecorded,  // timed and recorded (a span, or a row of the aggregates)
  kProbeKinds
};

// Costs are fixed-point ticks (ticks << kCostShift): a thousand nested calls of 20.4 ticks each
// must sum to 20,400, not 20,000.
inline constexpr int kCostShift = 8;

struct ProbeCosts {
  // Ticks one call of this kind adds, in its probes, to the measured duration of a call that
  // encloses it (both hooks, clock reads and recording included).
  uint64_t pair[kProbeKinds] = {};
  // Ticks of a clocked call's own probe inside its own measured interval (what an empty
  // function of that kind reports).
  uint64_t self[kProbeKinds] = {};
  // In-context sampling (hook_stack.h): what a sampled call's two extra clock reads add to an
  // enclosing call, and the hooks' own time as the sampling clock saw it in the calibration's
  // tight loop (raw ticks), the reference a program's sampled calls are compared with.
  uint64_t sampling[kProbeKinds] = {};
  uint64_t reference[kProbeKinds] = {};
};

// Runs the calls to be measured. The calibration holds no state of its own: the unit test
// drives it with a fake clock and fake costs.
class CalibrationTarget {
 public:
  virtual ~CalibrationTarget() = default;
  // One instrumented call of `kind` with an empty body (entry and exit hooks).
  virtual void run_pair(ProbeKind kind) = 0;
  // run_pair's own work without the instrumented call (the dispatch, its set-up): measured the
  // same way and taken off every kind, so only what the probes add remains.
  virtual void run_harness() {}
  // Clears the measurements run_pair feeds to self_ticks.
  virtual void reset_self() {}
  // The mean duration the probes of `kind` measured for their own empty calls since reset_self,
  // in fixed-point ticks (<< kCostShift).
  virtual uint64_t self_ticks(ProbeKind /*kind*/) { return 0; }
};

// Each kind: `trials` loops of `calls` calls, timed with `clock`; the cheapest loop counts (a
// loop preempted or slowed by an interrupt only ever takes longer), less the cheapest loop of
// run_harness (which includes the cost of reading the clock). With `min_trials` below `trials`,
// a kind's loops stop after `min_trials` once a second loop came within 1/32 of the cheapest
// (kConfirmShift): the cheapest is then a cost two loops saw, not a lucky one, and a quiet
// machine runs fewer loops (each is start-up time of every instrumented process).
inline constexpr int kConfirmShift = 5;
ProbeCosts calibrate(CalibrationTarget& target, uint64_t (*clock)(), int calls = 200,
                     int trials = 9, int min_trials = 0);

}  // namespace perfhat::autoinstrument
