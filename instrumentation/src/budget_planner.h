// The online half of the hybrid trace/sample budget (seed 002): each planning window it takes
// what every event class did (calls, time inside it) and what the collector itself cost, keeps
// sliding-window rates, and re-solves the plan with the solver perfhat-plan uses. Pure logic, no
// clocks or threads: the controller (budget_controller) feeds it, tests drive it directly.
//
// Stability: the rates and the per-event prices are means over the last `windows` windows
// (smoothing); a new plan replaces
// the running one only when the running one no longer fits the budget or the new one's value is
// better by more than `hysteresis` (probing), or (rates) the running one leaves more than
// `min_rate_change` of the allowance unused. A governor scales the budget down when the measured
// collector cost exceeds it, once per over-budget episode, and back up when it is well below.
#pragma once

#include <cstddef>
#include <deque>
#include <string>
#include <vector>

namespace perfhat::budget {

struct PlannerOptions {
  double budget_share = 0.01;  // collector CPU allowed, as a share of the process's CPU
  bool probing = false;        // untraced classes covered by the stack sampler
  std::size_t windows = 10;    // sliding window length, in planning windows
  double hysteresis = 0.05;    // probing: relative value gain needed to change the traced set
  // Rates: the share of the whole budget a running plan may leave unused before it is widened
  // (at most half the allowance, so a small allowance can still be won back), or the governor
  // raises the budget.
  double min_rate_change = 0.1;
  double max_probe_hz = 1000;    // the stack sampler's ceiling
  double governor_floor = 0.05;  // the governor never scales the budget below this factor
  // The governor acts once per over-budget episode: when the mean cost since its last action (or
  // the plan's last change of rates) is over the budget by more than `governor_band` of it, it
  // scales the budget by budget / cost (times `governor_aim`, a little under, so the next
  // measurement lands inside), then waits `governor_settle` busy windows (0 = half the sliding
  // window, at least 2) to see what the new plan costs before it acts again. Under (1 - 2 band)
  // of the budget it raises the same way. Plans changing every window delay it by at most the
  // sliding window.
  double governor_band = 0.1;
  double governor_aim = 0.95;
  std::size_t governor_settle = 0;
  // Rates: every class keeps at least this share of its calls (a floor in the solver), so the
  // weights 1/fraction still estimate its count and percentiles without bias. 0 allows classes
  // the plan drops entirely (then only phase 1 counts them).
  double min_fraction = 0.001;
  // A window in which the process used less CPU than this (CPU-s per second) is idle: the
  // collector's own wakes are then most of it, and the governor leaves its factor alone.
  double idle_cpu_per_s = 0.05;
};

// What one class did in one window.
struct ClassWindow {
  std::string name;
  double calls = 0;     // every call (phase 1 counts them all)
  double busy_s = 0;    // calls × their mean duration: time spent inside the class
  double weight = 1;    // importance
  bool pinned = false;  // "always trace"
  // Probe entries on cold cache lines its calls would make (budget_cost_account.h coldEntries:
  // per site, at most one per request), each priced at Costs::cold_s on top of detection.
  double cold_entries = 0;
};

// Per event: detection (every call) and report (a recorded call or a stack sample), seconds.
struct Costs {
  double detect_s = 0;
  double report_s = 0;
  // A call that is neither passed over by the budget nor recorded (the request sampler left it
  // out): counted and tested in full. Not planned with; the governor's measure uses it.
  double counted_s = 0;
  // One stack sample (probing), as timed inside the signal handler; 0 = not measured yet, a
  // sample is then priced as a traced event (the paper's equal costs). Unwinding a cold stack
  // costs tens of µs where a traced event costs one: the extract's §3.5 "different sampling and
  // tracing costs", F_probing x T_sample + sum traced F x T_trace = the budget.
  double sample_s = 0;
  // What a probe entry costs on top of detection when its lines are cold (the site's first call
  // in a request, budget_cost_account.h); the calibration's loops run warm. Rates mode plans
  // with it (a detected class pays its cold entries, ClassPlan::cold_hz); the governor's
  // measure charges it in both modes.
  double cold_s = 0;
};

// The collector's cost over one window, as measured.
struct WindowCost {
  double wall_s = 0;
  double process_cpu_s = 0;    // the whole process
  double collector_cpu_s = 0;  // the exporter and sampler threads' own CPU time
  double probe_cost_s = 0;     // estimated: calls × detect + recorded × report
  // The part of collector_cpu_s that no plan changes (waking, phase-1 export), estimated by the
  // controller; the plans share what the budget leaves after it.
  double fixed_cpu_s = 0;
  // The window began with calls recorded before the first plan (every call) still to export:
  // its collector cost is the start-up's, not a plan's, and the governor does not judge it.
  bool startup = false;
};

struct ClassPlan {
  std::string name;
  double frequency_hz = 0, duty_ratio = 0, weight = 1;
  bool pinned = false;
  double cold_hz = 0;   // cold probe entries per second (ClassWindow::cold_entries)
  bool traced = false;  // recorded in full (fraction 1)
  double fraction = 0;  // share of calls recorded
  // Rates: its calls are detected (each pays the pass-over). When detecting every class does not
  // fit the budget, the plan leaves some undetected: fraction 0, their sites disarmed.
  bool detected = true;
  double overhead = 0;  // predicted CPU share this class costs (detect + report)
};

struct Plan {
  std::vector<ClassPlan> classes;
  bool probing = false;
  double max_f = 0;                   // reported events per second allowed
  double probing_hz = 0;              // stack samples per second (probing)
  double value = 0;                   // the solver's information value
  double predicted_overhead = 0;      // share of the process CPU
  double measured_overhead = 0;       // last window, share of the process CPU
  double measured_overhead_mean = 0;  // mean over the busy windows of the sliding window
  // The collector thread's own part of that mean (its CPU clock: the tick, the export and its
  // serialisation, HTTP, the status, the stack samples' symbolisation). One window's part swings
  // by 10x with the exports every few seconds; this is what compares with a profile of a run.
  double collector_share_mean = 0;
  double governor = 1;       // factor on the budget
  bool over_budget = false;  // detection alone exceeds the budget
  std::size_t changes = 0;   // plans adopted so far (hysteresis keeps this low)
  // What the plan was solved with (the editor re-solves the plan with solvePlan on these):
  double allowed_cpu_per_s = 0;  // CPU seconds per second the plan may cost
  double process_cpu_per_s = 0;  // the process's CPU seconds per second
  Costs costs;                   // the per-event prices (the planner's sliding means)
};

class Planner {
 public:
  explicit Planner(PlannerOptions o = {}) : opt_(o) {}
  // One window: the classes' activity (same names each time or not), the collector's cost and
  // the current per-event costs. Returns the plan to apply.
  const Plan& observe(const std::vector<ClassWindow>& window, const WindowCost& cost,
                      const Costs& costs);
  const Plan& plan() const { return plan_; }
  const PlannerOptions& options() const { return opt_; }

 private:
  struct History {
    std::deque<ClassWindow> windows;
    bool seen = false;
  };
  void updateGovernor(const WindowCost& cost);
  // Slides every known class's history by this window (a class absent from it did nothing in
  // it and keeps its weight and pin); true when the window names a class not seen before.
  bool slideWindows(const std::vector<ClassWindow>& window);
  Costs smoothCosts(const Costs& measured);
  std::vector<ClassPlan> classRates() const;

  PlannerOptions opt_;
  std::vector<std::string> names_;  // class order of the plan
  std::vector<History> history_;    // same order
  std::deque<WindowCost> costs_;    // sliding
  std::deque<Costs> costs_seen_;    // the per-event prices, sliding
  Plan plan_;
  double governor_ = 1;
  // Busy windows measured since the plan last changed its rates or the governor its factor: the
  // governor judges these alone (earlier ones ran another plan), and waits for enough of them.
  std::size_t since_action_ = 0;
  // Busy windows since the governor last judged a plan: when plans keep changing, it still
  // judges once this reaches the sliding window (the last settling period's windows).
  std::size_t since_governor_ = 0;
};

// Solves one plan from class rates without history (the planner each window; the editor's
// "what if"). allowed_cpu_per_s: collector CPU seconds allowed per second; process_cpu_per_s
// turns predicted costs into shares. Pinned classes are traced first, whatever they cost.
Plan solvePlan(std::vector<ClassPlan> classes, double allowed_cpu_per_s, double process_cpu_per_s,
               const Costs& costs, bool probing, double max_probe_hz, double min_fraction = 0);

}  // namespace perfhat::budget
