#include "budget_planner.h"

#include <algorithm>
#include <cmath>

#include "hybrid_budget.h"

namespace perfhat::budget {
namespace {

constexpr double kNoReportCost = 1e-12;  // a report cost of 0 would make MaxF infinite

// What one class costs per second. Rates: every call detected, the recorded share reported.
// Probing: an untraced class is not detected at all (its sites are disarmed; the stack sampler
// covers it), a traced one is detected and reported (the paper's probing model, §3.4).
double classCost(const ClassPlan& k, const Costs& c, bool probing) {
  if (probing) return k.traced ? k.frequency_hz * (c.detect_s + c.report_s) : 0;
  if (!k.detected) return 0;
  return k.frequency_hz * (c.detect_s + k.fraction * c.report_s) + k.cold_hz * c.cold_s;
}

// Rates: every detected call pays its detection before any is recorded (MaxF' of the extract's
// §3.5), so when detecting every class and recording its floor costs more than `allowed`, no rate
// can fit and a plan of floors alone overshoots by the whole excess (on the sample service at 1 %:
// 46,000 detected calls a second, governor at its floor, 1.6-2.8 % measured). The plan then leaves
// whole classes undetected (their sites disarmed, as probing mode's untraced classes): pinned
// classes first, then by weight, and among equal weights the cheapest first (more classes
// covered), each kept while it fits. Classes not measured yet are kept (their rate is unknown).
std::vector<bool> detectedClasses(const std::vector<ClassPlan>& classes, double allowed,
                                  const Costs& c, double min_fraction) {
  const double report = std::max(c.report_s, kNoReportCost);
  auto keep_cost = [&](const ClassPlan& k) {
    const double floor = k.pinned ? 1.0 : std::clamp(min_fraction, 0.0, 1.0);
    return k.frequency_hz * (c.detect_s + floor * report) + k.cold_hz * c.cold_s;
  };
  std::vector<bool> detected(classes.size(), true);
  double all = 0;
  for (const ClassPlan& k : classes) all += keep_cost(k);
  if (all <= allowed) return detected;
  double used = 0;
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < classes.size(); ++i) {
    if (classes[i].pinned || classes[i].frequency_hz <= 0)
      used += keep_cost(classes[i]);
    else
      order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (classes[a].weight != classes[b].weight) return classes[a].weight > classes[b].weight;
    return keep_cost(classes[a]) < keep_cost(classes[b]);
  });
  for (std::size_t i : order) {
    if (used + keep_cost(classes[i]) <= allowed)
      used += keep_cost(classes[i]);
    else
      detected[i] = false;
  }
  return detected;
}

// A traced event's price in probing mode (detected and reported), and a stack sample's.
double tracePrice(const Costs& c) { return std::max(c.report_s + c.detect_s, kNoReportCost); }
double samplePrice(const Costs& c) { return c.sample_s > 0 ? c.sample_s : tracePrice(c); }
// The stack samples per second the part of MaxF the traced classes leave buys.
double probeHz(double rest_f, const Costs& c, double max_probe_hz) {
  return std::clamp(rest_f * tracePrice(c) / samplePrice(c), 0.0, max_probe_hz);
}

// CPU seconds per second the plan costs: its classes, and each stack sample.
double planCost(const Plan& p, const Costs& c) {
  double cost = p.probing ? p.probing_hz * samplePrice(c) : 0.0;
  for (const ClassPlan& k : p.classes) cost += classCost(k, c, p.probing);
  return cost;
}

void fillOverheads(Plan& p, const Costs& c, double process_cpu_per_s) {
  const double per = process_cpu_per_s > 0 ? 1.0 / process_cpu_per_s : 0;
  for (ClassPlan& k : p.classes) k.overhead = classCost(k, c, p.probing) * per;
  p.predicted_overhead = planCost(p, c) * per;
}

// MaxF, the reported events per second the budget allows. Rates: every call is detected,
// whatever its class's rate, so detection is paid first (MaxF' of the extract's §3.5). Probing:
// only the traced classes are detected, so a traced event costs detection and report, and MaxF
// counts traced events and stack samples at that price (a sample costs a report only: the plan
// is a little pessimistic about the probe).
void setMaxF(Plan& p, const Costs& costs, double min_fraction) {
  const bool probing = p.probing;
  const double report = std::max(costs.report_s + (probing ? costs.detect_s : 0), kNoReportCost);
  if (!probing) {
    const std::vector<bool> detected =
        detectedClasses(p.classes, p.allowed_cpu_per_s, costs, min_fraction);
    for (std::size_t i = 0; i < p.classes.size(); ++i) p.classes[i].detected = detected[i];
  }
  double detect_all = 0, pinned_f = 0;
  for (const ClassPlan& k : p.classes) {
    if (!probing && k.detected)
      detect_all += k.frequency_hz * costs.detect_s + k.cold_hz * costs.cold_s;
    if (k.pinned) pinned_f += k.frequency_hz;
  }
  const double spare = p.allowed_cpu_per_s - detect_all;
  p.over_budget = spare < 0;
  p.max_f = std::max(0.0, spare) / report;
  if (pinned_f > p.max_f) {  // pins win over the budget; the plan says it is over
    p.over_budget = true;
    p.max_f = pinned_f;
  }
}

// The classes the solver chooses among, and what of MaxF is theirs.
struct SolverInput {
  std::vector<plan::EventClass> solver;
  std::vector<std::size_t> index;  // the plan's class of each solver class
  double rest_f = 0;
};

// Classes that did nothing yet are traced (their first calls are kept; the next window knows
// their rate). Pinned ones are outside the solver in probing mode, floors in the base case.
SolverInput solverInput(Plan& p, double min_fraction) {
  const bool probing = p.probing;
  SolverInput in;
  in.rest_f = p.max_f;
  for (std::size_t i = 0; i < p.classes.size(); ++i) {
    ClassPlan& k = p.classes[i];
    if (k.frequency_hz <= 0) {
      k.traced = true;
      k.fraction = 1;
      continue;
    }
    if (probing && k.pinned) {
      k.traced = true;
      k.fraction = 1;
      in.rest_f -= k.frequency_hz;
      p.value += k.frequency_hz * k.weight;
      continue;
    }
    if (!k.detected) {  // rates: left undetected, nothing recorded
      k.traced = false;
      k.fraction = 0;
      continue;
    }
    in.solver.push_back({k.name, k.frequency_hz, std::clamp(k.duty_ratio, 0.0, 1.0), k.weight,
                         probing    ? 0.0
                         : k.pinned ? k.frequency_hz
                                    : k.frequency_hz * std::clamp(min_fraction, 0.0, 1.0)});
    in.index.push_back(i);
  }
  in.rest_f = std::max(0.0, in.rest_f);
  return in;
}

// The solver's model lets the probe take all of MaxF; the sampler has a ceiling, so budget past
// it is worth more spent on tracing. The solver's best plans and the greedy prefixes by weight
// (trace each class that still fits) are compared under the capped value, with the samples the
// rest buys at their own price (Costs::sample_s).
plan::ProbePlan bestProbePlan(const std::vector<plan::EventClass>& solver, double rest_f,
                              const Costs& costs, double max_probe_hz) {
  plan::ProbeResult r = plan::solveProbing(solver, rest_f, false);
  std::vector<std::vector<bool>> candidates;
  candidates.push_back(r.best.traced);
  for (const plan::ProbePlan& a : r.alternatives) candidates.push_back(a.traced);
  std::vector<std::size_t> order(solver.size());
  for (std::size_t j = 0; j < order.size(); ++j) order[j] = j;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return solver[a].weight > solver[b].weight;
  });
  std::vector<bool> prefix(solver.size(), false);
  double prefix_f = 0;
  for (std::size_t j : order) {
    if (prefix_f + solver[j].frequency_hz > rest_f) continue;
    prefix_f += solver[j].frequency_hz;
    prefix[j] = true;
    candidates.push_back(prefix);
  }
  auto capped = [&](const std::vector<bool>& t) {
    double f = 0, fw = 0, rw = 0;
    for (std::size_t j = 0; j < solver.size(); ++j) {
      if (j < t.size() && t[j]) {
        f += solver[j].frequency_hz;
        fw += solver[j].frequency_hz * solver[j].weight;
      } else {
        rw += solver[j].duty_ratio * solver[j].weight;
      }
    }
    if (f > rest_f * (1 + 1e-9)) return -1.0;
    return fw + probeHz(rest_f - f, costs, max_probe_hz) * rw;
  };
  std::size_t best = 0;
  for (std::size_t c = 1; c < candidates.size(); ++c)
    if (capped(candidates[c]) > capped(candidates[best])) best = c;
  return plan::evaluateProbePlan(solver, rest_f, candidates[best]);
}

// Probing: each class traced in full or not at all, the rest of MaxF spent on stack samples.
void applyProbing(Plan& p, const SolverInput& in, const Costs& costs, double max_probe_hz) {
  const plan::ProbePlan best = bestProbePlan(in.solver, in.rest_f, costs, max_probe_hz);
  for (std::size_t j = 0; j < in.index.size(); ++j) {
    ClassPlan& k = p.classes[in.index[j]];
    k.traced = j < best.traced.size() && best.traced[j];
    k.fraction = k.traced ? 1 : 0;
  }
  // The sampler's ceiling may leave part of MaxF unused: the value is the one it achieves.
  p.probing_hz = probeHz(best.probing_hz, costs, max_probe_hz);
  double untraced_rw = 0;
  for (std::size_t j = 0; j < in.index.size(); ++j) {
    const ClassPlan& k = p.classes[in.index[j]];
    if (k.traced) {
      p.value += k.frequency_hz * k.weight;
    } else {
      untraced_rw += k.duty_ratio * k.weight;
    }
  }
  p.value += p.probing_hz * untraced_rw;
}

// Rates: each class reports a fraction of its calls, at least its floor.
void applyRates(Plan& p, const SolverInput& in, double min_fraction) {
  const std::vector<plan::EventClass>& solver = in.solver;
  plan::RatePlan r;
  if (!plan::solveRates(solver, in.rest_f, r)) {  // floors over MaxF: pins in full, the floors
    p.over_budget = true;
    r.fraction.assign(solver.size(), 0);
    r.value = 0;
    for (std::size_t j = 0; j < solver.size(); ++j) {
      const bool pin = p.classes[in.index[j]].pinned;
      r.fraction[j] = pin ? 1 : std::clamp(min_fraction, 0.0, 1.0);
      r.value += r.fraction[j] * solver[j].frequency_hz * solver[j].weight;
    }
  }
  for (std::size_t j = 0; j < in.index.size(); ++j) {
    ClassPlan& k = p.classes[in.index[j]];
    k.fraction = r.fraction[j];
    k.traced = k.fraction >= 1;
  }
  p.value += r.value;
}

}  // namespace

Plan solvePlan(std::vector<ClassPlan> classes, double allowed, double process_cpu_per_s,
               const Costs& costs, bool probing, double max_probe_hz, double min_fraction) {
  Plan p;
  p.probing = probing;
  p.allowed_cpu_per_s = allowed;
  p.process_cpu_per_s = process_cpu_per_s;
  p.costs = costs;
  p.classes = std::move(classes);
  setMaxF(p, costs, min_fraction);
  const SolverInput in = solverInput(p, min_fraction);
  if (probing) {
    applyProbing(p, in, costs, max_probe_hz);
  } else {
    applyRates(p, in, min_fraction);
  }
  fillOverheads(p, costs, process_cpu_per_s);
  return p;
}

void Planner::updateGovernor(const WindowCost& c) {
  if (c.process_cpu_s <= 0) return;
  plan_.measured_overhead = (c.collector_cpu_s + c.probe_cost_s) / c.process_cpu_s;
  auto busy = [&](const WindowCost& w) {
    return w.wall_s > 0 && w.process_cpu_s / w.wall_s >= opt_.idle_cpu_per_s;
  };
  if (!busy(c)) return;
  // A window that ran before the first plan recorded every call (and its export lands in the
  // next windows): what it cost says nothing of any plan. Counted like the windows before an
  // action, so the governor first judges the windows the first plan ran, after its settling
  // wait. (On the sample service such a start-up window cost 15-28 % of the CPU, and the
  // governor cut a 1 % plan to its floor in its first step, recording nothing for 30 s.) Nor
  // are the windows that export what it recorded (WindowCost::startup): with an export every
  // 5 s they held the collector at 10-13 % of the CPU for the first plan's windows, and the
  // governor's first judgement cut a 1 % plan to its floor all the same.
  if (plan_.classes.empty() || c.startup) return;
  ++since_action_;
  ++since_governor_;
  // Governed on means, not on the last window: the collector's periodic work (an export, the
  // status sent every few seconds) makes single windows several times dearer than the mean.
  // Only the windows since the last action or change of rates count: earlier ones ran another
  // plan. Cutting again for them each window compounded one dear window into a plan at its
  // floor; and a plan widened after ten cheap windows was judged on nine of them, so it ran over
  // budget for six windows and was then cut by a sixth of its excess.
  const std::size_t settle =
      opt_.governor_settle > 0 ? opt_.governor_settle : std::max<std::size_t>(2, opt_.windows / 2);
  // Plans changing at every window: the last settling period is judged once the governor has
  // waited a whole sliding window without judging.
  const std::size_t judged = since_action_ < settle && since_governor_ >= opt_.windows
                                 ? std::min(settle, since_governor_)
                                 : since_action_;
  double collector = 0, probes = 0, process = 0, fixed_s = 0;
  double all_collector = 0, all_probes = 0, all_process = 0;
  std::size_t taken = 0;
  for (auto it = costs_.rbegin(); it != costs_.rend(); ++it) {
    const WindowCost& w = *it;
    if (!busy(w) || w.startup) continue;
    all_collector += w.collector_cpu_s;
    all_probes += w.probe_cost_s;
    all_process += w.process_cpu_s;
    if (taken == judged) continue;
    ++taken;
    collector += w.collector_cpu_s;
    probes += w.probe_cost_s;
    process += w.process_cpu_s;
    fixed_s += std::min(w.fixed_cpu_s, w.collector_cpu_s);
  }
  if (all_process > 0) {
    plan_.measured_overhead_mean = (all_collector + all_probes) / all_process;
    plan_.collector_share_mean = all_collector / all_process;
  }
  if (process <= 0 || judged < settle) return;
  since_governor_ = 0;
  const double measured = (collector + probes) / process;
  // Only what the plan controls is governed: the collector's fixed part is taken off both sides
  // (when it alone exceeds the budget, the plan says over_budget; scaling cannot help).
  const double fixed = fixed_s / process;
  const double b = opt_.budget_share - fixed, m = measured - fixed;
  if (b <= 0) return;
  const double before = governor_;
  // The band is a share of the whole budget (see observe): against the remainder alone, the
  // fixed part's noise looked like a plan over budget at 1 %. Raising waits for at most half
  // the remainder unused, so a small remainder can still be won back.
  if (m > b + opt_.budget_share * opt_.governor_band) {
    governor_ *= std::clamp(opt_.governor_aim * b / m, 0.0, 1.0);
  } else if (m < b - std::min(opt_.budget_share * 2 * opt_.governor_band, b / 2) && governor_ < 1) {
    // At most half again per step: a plan that cost nothing may cost a lot more once widened.
    governor_ *= std::clamp(opt_.governor_aim * b / std::max(m, 1e-12), 1.0, 1.5);
  }
  governor_ = std::clamp(governor_, opt_.governor_floor, 1.0);
  if (governor_ != before) since_action_ = 0;
}

// Each known class's rates over the windows it has (frequency, duty ratio, cold entries per
// second) with its newest weight and pin.
std::vector<ClassPlan> Planner::classRates() const {
  std::vector<ClassPlan> classes;
  for (std::size_t i = 0; i < names_.size(); ++i) {
    ClassPlan k;
    k.name = names_[i];
    double calls = 0, busy = 0, cold = 0;
    // The class's windows are the last ones of costs_ (a newer class has fewer).
    const auto& ws = history_[i].windows;
    double class_wall = 0;
    for (std::size_t j = 0; j < ws.size(); ++j) {
      calls += ws[j].calls;
      busy += ws[j].busy_s;
      cold += ws[j].cold_entries;
      class_wall += costs_[costs_.size() - ws.size() + j].wall_s;
    }
    k.frequency_hz = class_wall > 0 ? calls / class_wall : 0;
    k.duty_ratio = class_wall > 0 ? std::min(1.0, busy / class_wall) : 0;
    k.cold_hz = class_wall > 0 ? cold / class_wall : 0;
    k.weight = ws.back().weight;
    k.pinned = ws.back().pinned;
    classes.push_back(std::move(k));
  }
  return classes;
}

// The per-event prices over the sliding window (a price not measured yet, 0, is left out): a
// record's price comes from the collector's fit and moves by several % from window to window,
// which alone pushed a plan at the edge of the budget over it and back.
Costs Planner::smoothCosts(const Costs& measured) {
  costs_seen_.push_back(measured);
  while (costs_seen_.size() > std::max<std::size_t>(opt_.windows, 1)) costs_seen_.pop_front();
  auto mean = [&](double Costs::*field) {
    double sum = 0, n = 0;
    for (const Costs& c : costs_seen_)
      if (c.*field > 0) {
        sum += c.*field;
        n += 1;
      }
    return n > 0 ? sum / n : 0.0;
  };
  return {mean(&Costs::detect_s), mean(&Costs::report_s), mean(&Costs::counted_s),
          mean(&Costs::sample_s), mean(&Costs::cold_s)};
}

bool Planner::slideWindows(const std::vector<ClassWindow>& window) {
  bool new_class = false;
  for (const ClassWindow& w : window) {
    if (std::find(names_.begin(), names_.end(), w.name) == names_.end()) {
      names_.push_back(w.name);
      history_.emplace_back();
      new_class = true;
    }
  }
  for (std::size_t i = 0; i < names_.size(); ++i) {
    ClassWindow w{names_[i]};
    if (!history_[i].windows.empty()) {  // absent, it keeps its weight and pin
      w.weight = history_[i].windows.back().weight;
      w.pinned = history_[i].windows.back().pinned;
    }
    for (const ClassWindow& x : window)
      if (x.name == names_[i]) w = x;
    history_[i].windows.push_back(w);
    while (history_[i].windows.size() > opt_.windows) history_[i].windows.pop_front();
  }
  return new_class;
}

const Plan& Planner::observe(const std::vector<ClassWindow>& window, const WindowCost& cost,
                             const Costs& measured_costs) {
  const Costs costs = smoothCosts(measured_costs);
  const bool new_class = slideWindows(window);
  costs_.push_back(cost);
  while (costs_.size() > opt_.windows) costs_.pop_front();
  const double governor_before = governor_;
  updateGovernor(cost);
  // A raise is the governor's judgement that the plan may spend more: it is re-judged at once
  // rather than waiting for the widen band (which a raise clamped at 1 may not reach).
  const bool governor_raised = governor_ > governor_before;

  double wall = 0, process = 0, fixed = 0;
  for (const WindowCost& c : costs_) {
    wall += c.wall_s;
    process += c.process_cpu_s;
    fixed += c.fixed_cpu_s;
  }
  const double fixed_per_s = wall > 0 ? fixed / wall : 0;
  const double process_per_s = wall > 0 ? process / wall : 0;
  const std::vector<ClassPlan> classes = classRates();
  // What the plans may spend once the collector's fixed part is paid; when that part alone is
  // over the budget, no plan keeps to it, and the plan says so.
  const double whole = opt_.budget_share * process_per_s * governor_;
  const double left = whole - fixed_per_s;
  const double allowed = std::max(0.0, left);
  Plan candidate = solvePlan(classes, allowed, process_per_s, costs, opt_.probing,
                             opt_.max_probe_hz, opt_.min_fraction);
  if (left < 0) candidate.over_budget = true;
  candidate.governor = governor_;
  candidate.measured_overhead = plan_.measured_overhead;
  candidate.measured_overhead_mean = plan_.measured_overhead_mean;
  candidate.collector_share_mean = plan_.collector_share_mean;

  bool adopt = plan_.classes.empty() || new_class;
  if (!adopt) {
    // The running plan under the new rates: same traced set / fractions, same probe rate.
    Plan current = plan_;
    for (std::size_t i = 0; i < classes.size(); ++i) {
      ClassPlan& k = current.classes[i];
      k.frequency_hz = classes[i].frequency_hz;
      k.duty_ratio = classes[i].duty_ratio;
      k.cold_hz = classes[i].cold_hz;
      // A pin or weight the user changed is planned at once (the editor's what-if promises it).
      if (k.pinned != classes[i].pinned || k.weight != classes[i].weight) adopt = true;
      k.weight = classes[i].weight;
      k.pinned = classes[i].pinned;
    }
    // Within the hysteresis of the budget: a window's noise is not a reason to re-plan.
    // (A candidate over budget is the least the budget allows: adopted whenever the running plan
    // does not fit either.) The bands are shares of the whole budget, not of what the fixed part
    // leaves: at 1 % that remainder is a few tenths of the budget, the difference of two noisy
    // figures, and bands sized against it re-planned on every wobble of either.
    const double current_cost = planCost(current, costs);
    const bool fits = current_cost <= allowed + whole * opt_.hysteresis;
    if (!fits) adopt = true;
    if (!adopt && opt_.probing) {
      double value = 0, untraced_rw = 0, traced_f = 0;
      for (const ClassPlan& k : current.classes) {
        if (k.traced) {
          value += k.frequency_hz * k.weight;
          traced_f += k.frequency_hz;
        } else {
          untraced_rw += k.duty_ratio * k.weight;
        }
      }
      value += probeHz(candidate.max_f - traced_f, costs, opt_.max_probe_hz) * untraced_rw;
      adopt = candidate.value > value * (1 + opt_.hysteresis);
    } else if (!adopt) {
      // Rates: a running plan that fits is widened only when it leaves more than
      // `min_rate_change` of the allowance unused. The marginal class carries what detection
      // and the floors leave, so a few % of noise in the allowance (the process's CPU, a
      // record's price) moved its rate by tens of %: re-planning whenever a rate moved by a
      // share of itself gave a new plan in 20-25 of 30 windows on the sample service. The band
      // is at most half the allowance (as the governor's raise band): when the fixed part takes
      // over 90 % of the budget, 10 % of the whole could never be left unused, and a plan
      // narrowed by a spike or a cut stayed narrow.
      double value = 0;
      for (const ClassPlan& k : current.classes)
        if (k.detected && k.frequency_hz > 0) value += k.frequency_hz * k.fraction * k.weight;
      const double widen_band = std::min(whole * opt_.min_rate_change, allowed / 2);
      adopt = (governor_raised || current_cost < allowed - widen_band) && candidate.value > value;
    }
    if (!adopt) {
      current.max_f = candidate.max_f;
      current.governor = governor_;
      current.measured_overhead = plan_.measured_overhead;
      current.measured_overhead_mean = plan_.measured_overhead_mean;
      current.collector_share_mean = plan_.collector_share_mean;
      current.over_budget = candidate.over_budget;
      current.allowed_cpu_per_s = allowed;
      current.process_cpu_per_s = process_per_s;
      current.costs = costs;
      if (opt_.probing) {  // the probe takes whatever the traced set leaves
        double traced_f = 0;
        for (const ClassPlan& k : current.classes)
          if (k.traced) traced_f += k.frequency_hz;
        current.probing_hz = probeHz(current.max_f - traced_f, costs, opt_.max_probe_hz);
      }
      fillOverheads(current, costs, process_per_s);
      plan_ = std::move(current);
      return plan_;
    }
  }
  bool same = candidate.classes.size() == plan_.classes.size();
  for (std::size_t i = 0; same && i < candidate.classes.size(); ++i)
    same = candidate.classes[i].fraction == plan_.classes[i].fraction &&
           candidate.classes[i].traced == plan_.classes[i].traced &&
           candidate.classes[i].detected == plan_.classes[i].detected;
  candidate.changes = plan_.changes + (same ? 0 : 1);
  // The windows before it ran other rates: the governor judges the new plan on its own.
  if (!same) since_action_ = 0;
  plan_ = std::move(candidate);
  return plan_;
}

}  // namespace perfhat::budget
