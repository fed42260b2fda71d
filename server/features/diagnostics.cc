// publishDiagnostics: parse problems, predicted regressions of changed functions, and (optional)
// hotspots.
//
// Regression rule. For a changed function with production data, let M be its measured main
// statistic and P the predicted one for the code as written. Warn when P - M exceeds BOTH
//   * the absolute threshold  Options::regression_absolute_ns, and
//   * the relative threshold  r * M, where r = regression_relative, and, when learn_thresholds
//     is on, the noise allowance  z * SE(M)  (z = 2, ≈ 95 %), capped at learned_relative_max * M.
// M is itself an estimate from the n calls of the baseline, and what can hide a change is the
// uncertainty of M, not the spread of single calls: SE = σ/√n for the mean, ≈ 1.2533 σ/√n for
// the median (normal approximation), with σ taken from the spread as (p90 - p50) / 1.2816 (the
// normal p90 lies 1.2816 σ above the median). So a noisy function measured over many calls still
// warns on +50 %, while one seen a handful of times needs a larger predicted change. (Widening
// by the raw spread (p90 - p50) / p50 let a noisy 20 s baseline hide predicted +40 %..+100 %.)
//
// The costs come from inference (FunctionInfo::added): P - M is exactly the sum of the new
// costs, each its call's value times the factors that multiply it up to one call of the function
// (loop iterations, branch weights, production call counts), and the warning prints those
// factors. The warning sits on the new call that adds most; other new calls that on their own
// exceed both thresholds get a warning too. A call production's measured time has room for is
// only "possibly new" (DESIGN §10): an Information diagnostic when it would otherwise warn.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "server/features/derivation_text.h"
#include "server/features/feature_util.h"
#include "server/features/names.h"

namespace perfhat::features {
namespace {

using analysis::FunctionInfo;
using analysis::Node;
using analysis::NodeKind;

Range anchorOf(const Node& n) {
  if (n.kind == NodeKind::Loop || n.kind == NodeKind::Branch) return {n.range.start, n.hint};
  return n.range;
}

// z · standard error of the baseline statistic m (see the header), at most learned_relative_max·m.
double noiseAllowance(const Stats& st, const Options& o, double m) {
  constexpr double kZ = 2.0;            // two-sided ≈ 95 %
  constexpr double kMedianSe = 1.2533;  // SE(median) / SE(mean) = √(π/2)
  double se = analysis::standardErrorOfMean(st.p50_ns, st.p90_ns, st.count);
  if (o.main_statistic != "mean") se *= kMedianSe;  // p50 (p90/p99: at least as uncertain)
  return std::min(kZ * se, o.learned_relative_max * m);
}

Range anchorOf(const FunctionInfo& f, const analysis::AddedCost& a) {
  if (a.node >= 0 && a.node < static_cast<int>(f.nodes.size())) return anchorOf(f.nodes[a.node]);
  return f.name_range;
}

// The assumptions a set of costs rests on, once each: "default 10 iterations, branch prior 62.5 %".
std::string restsOn(const FunctionInfo& f,
                    const std::vector<std::pair<const analysis::AddedCost*, double>>& costs) {
  std::vector<std::string> seen;
  for (const auto& [a, cost] : costs) {
    for (const analysis::CostFactor& k : a->factors) {
      std::string what;
      const bool node = k.from >= 0 && k.from < static_cast<int>(f.nodes.size());
      if (k.kind == analysis::CostFactor::Kind::Iterations && k.assumed)
        what = "assumed " + formatCount(k.value) + " iterations";
      else if (k.kind == analysis::CostFactor::Kind::Iterations && node &&
               f.nodes[k.from].loop.iteration_source == analysis::IterationSource::DataFlow)
        what = formatCount(k.value) + " iterations bounded by the insertions into " +
               f.nodes[k.from].loop.range_var_name;
      else if (k.kind == analysis::CostFactor::Kind::Branch && k.assumed)
        what = "branch prior " + formatCount(k.value * 100) + " %";
      if (!what.empty() && std::find(seen.begin(), seen.end(), what) == seen.end())
        seen.push_back(what);
    }
  }
  std::string out;
  for (const std::string& s : seen) out += (out.empty() ? "" : ", ") + s;
  return out;
}

using Costs = std::vector<std::pair<const analysis::AddedCost*, double>>;

// What the code as written changes in a measured function, as the warnings read it: the
// measured statistic, the threshold, and inference's costs by status, largest first; and one
// member per kind of warning it may give, in the order they are published.
struct Change {
  const FunctionInfo& f;
  const Options& o;
  const Stats& st;
  double m = 0;      // the measured statistic
  double limit = 0;  // the threshold a change must exceed to warn
  std::string fn;    // "name()"
  Costs added, possibly, removed;
  double delta = 0;        // the new costs less the removed ones
  double added_total = 0;  // the new costs

  void regressionWarnings(std::vector<Diagnostic>& out) const;
  bool contextWarning(std::vector<Diagnostic>& out) const;  // whether it warned
  void possibleRegression(bool context_warns, std::vector<Diagnostic>& out) const;
  void improvement(std::vector<Diagnostic>& out) const;
  void possiblyNew(std::vector<Diagnostic>& out) const;
};

std::optional<Change> changeOf(const FunctionInfo& f, const Options& o) {
  if (f.nodes.empty() || f.added.empty()) return std::nullopt;
  const Node& root = f.root();
  if (!root.measured || root.measured->count == 0) return std::nullopt;
  const Stats& st = *root.measured;
  const double m = detail::pick(st, o);
  // The noise allowance guards against reading a change into a noisy measurement. Where the
  // deployed body is known, the change is in the code itself (calls gone, calls new): only its
  // size against the thresholds decides, and its uncertainty is the interval's.
  const bool known_change = f.deployed == analysis::DeployedBody::Changed;
  const double limit =
      std::max({o.regression_relative * m, o.regression_absolute_ns,
                o.learn_thresholds && !known_change ? noiseAllowance(st, o, m) : 0.0});
  Change c{f, o, st, m, limit, callText(functionName(f))};
  Costs &added = c.added, &possibly = c.possibly, &removed = c.removed;
  double& delta = c.delta;
  // What inference added to the measured total (new) and what it left out (possibly new), each
  // with its cost per call of the function, largest first.
  using Status = analysis::AddedCost::Status;
  for (const analysis::AddedCost& a : f.added) {
    const double cost = detail::pick(a.total, o);
    if (a.status == Status::New) {
      added.emplace_back(&a, cost);
      delta += cost;
    } else if (a.status == Status::Removed) {
      removed.emplace_back(&a, cost);
      delta -= cost;
    } else {
      possibly.emplace_back(&a, cost);
    }
  }
  auto larger = [](const auto& a, const auto& b) { return a.second > b.second; };
  std::stable_sort(added.begin(), added.end(), larger);
  std::stable_sort(possibly.begin(), possibly.end(), larger);
  std::stable_sort(removed.begin(), removed.end(), larger);
  for (const auto& entry : added) c.added_total += entry.second;
  return c;
}

// The warning's figure is the sum of the products it lists: the prediction is the measured
// value plus exactly these costs.
void Change::regressionWarnings(std::vector<Diagnostic>& out) const {
  if (f.changed && !added.empty() && delta > limit) {
    Diagnostic d;
    d.severity = Severity::Warning;
    d.code = "perfhat.regression";
    d.range = anchorOf(f, *added.front().first);
    d.message = "Predicted +" + formatDuration(delta) + " per call of " + fn + ": " +
                detail::addedCostText(f, *added.front().first, o);
    if (added.size() > 1) {
      d.message += ", + " + std::to_string(added.size() - 1) + " other new call(s) " +
                   formatDuration(added_total - added.front().second);
    }
    if (!removed.empty())
      d.message += ", − " + std::to_string(removed.size()) + " removed call(s) " +
                   formatDuration(added_total - delta);
    d.message += " — " + detail::statLabel(o) + " " + formatDuration(m + delta) + " vs " +
                 formatDuration(m) + " in production (warns above +" + formatDuration(limit) + ")";
    if (f.root().estimate.interval)
      d.message +=
          "; likely " + formatDurationRange(detail::pick(f.root().estimate.interval->lo, o),
                                            detail::pick(f.root().estimate.interval->hi, o));
    if (const std::string assumed = restsOn(f, added); !assumed.empty())
      d.message += "; rests on " + assumed;
    out.push_back(d);
    for (size_t i = 1; i < added.size(); ++i) {
      if (!(added[i].second > limit)) break;  // sorted: none after
      Diagnostic more;
      more.severity = Severity::Warning;
      more.code = "perfhat.regression";
      more.range = anchorOf(f, *added[i].first);
      more.message = "Adds ~" + formatDuration(added[i].second) + " per call of " + fn + ": " +
                     detail::addedCostText(f, *added[i].first, o);
      out.push_back(more);
    }
  }
}

// A new call of a callee whose cost depends on the caller's context (an inner call with two
// production outcomes, e.g. a lazily loaded collection): production's callers ran it in the
// fast outcome, this caller's context is not known. When the slow outcome crosses the
// threshold, that is a warning, said as depending on the context.
bool Change::contextWarning(std::vector<Diagnostic>& out) const {
  double context_up = 0;
  const analysis::AddedCost* context_cost = nullptr;
  for (const auto& [a, cost] : added) {
    if (a->node < 0 || a->node >= static_cast<int>(f.nodes.size())) continue;
    const double up = f.nodes[a->node].estimate.context_extra_ns * a->executions;
    if (up > 0 && (!context_cost || up > context_up)) context_cost = a;
    context_up += up;
  }
  const bool context_warns =
      f.changed && context_cost && !(delta > limit) && delta + context_up > limit;
  if (context_warns) {
    const analysis::Estimate& e = f.nodes[context_cost->node].estimate;
    Diagnostic d;
    d.severity = Severity::Warning;
    d.code = "perfhat.regression";
    d.range = anchorOf(f, *context_cost);
    d.message = "Context-dependent regression: predicted " + std::string(delta >= 0 ? "+" : "−") +
                formatDuration(std::abs(delta)) + " per call of " + fn + " where " +
                detail::displayName(f, f.nodes[context_cost->node]) +
                " finds its state as production's callers did, up to +" +
                formatDuration(delta + context_up) + " where it takes the slow outcome of " +
                contextText(e.context) + " — " + detail::statLabel(o) + " " + formatDuration(m) +
                " in production (warns above +" + formatDuration(limit) + ")";
    out.push_back(d);
  }
  return context_warns;
}

// Only the upper part of the likely range crosses the threshold: a possible regression, said
// as such, never a warning.
void Change::possibleRegression(bool context_warns, std::vector<Diagnostic>& out) const {
  const auto& interval = f.root().estimate.interval;
  if (f.changed && !added.empty() && !(delta > limit) && !context_warns && interval &&
      std::isfinite(detail::pick(interval->hi, o)) && detail::pick(interval->hi, o) - m > limit) {
    Diagnostic d;
    d.severity = Severity::Information;
    d.code = "perfhat.possible-regression";
    d.range = anchorOf(f, *added.front().first);
    d.message = "Possible regression: predicted " + std::string(delta >= 0 ? "+" : "−") +
                formatDuration(std::abs(delta)) + " per call of " + fn + " (under the +" +
                formatDuration(limit) + " threshold), but the likely range reaches " +
                formatDuration(detail::pick(interval->hi, o)) + " vs " + formatDuration(m) +
                " in production: " + detail::addedCostText(f, *added.front().first, o);
    if (const std::string assumed = restsOn(f, added); !assumed.empty())
      d.message += "; rests on " + assumed;
    out.push_back(d);
  }
}

// Work removed: a predicted improvement is as much a prediction as a regression.
void Change::improvement(std::vector<Diagnostic>& out) const {
  if (!removed.empty() && -delta > limit) {
    Diagnostic d;
    d.severity = Severity::Information;
    d.code = "perfhat.improvement";
    d.range = f.name_range;
    d.message = "Predicted −" + formatDuration(-delta) + " per call of " + fn + ": " +
                detail::addedCostText(f, *removed.front().first, o);
    if (removed.size() > 1)
      d.message += ", − " + std::to_string(removed.size() - 1) + " other removed call(s) " +
                   formatDuration(added_total - delta - removed.front().second);
    if (!added.empty())
      d.message +=
          ", + " + std::to_string(added.size()) + " new call(s) " + formatDuration(added_total);
    d.message += " — " + detail::statLabel(o) + " " + formatDuration(std::max(0.0, m + delta)) +
                 " vs " + formatDuration(m) + " in production";
    out.push_back(d);
  }
}

// A call that would warn if it were new, but that production's measured time has room for:
// information, never a warning (DESIGN §10, "What production ran").
void Change::possiblyNew(std::vector<Diagnostic>& out) const {
  for (const auto& [a, cost] : possibly) {
    if (!(cost > limit)) break;
    Diagnostic d;
    d.severity = Severity::Information;
    d.code = "perfhat.possibly-new";
    d.range = anchorOf(f, *a);
    d.message = "Possibly new: if production does not run this call yet, it adds ~" +
                formatDuration(cost) + " per call of " + fn + ": " +
                detail::addedCostText(f, *a, o) +
                ". Production has no call-site data for it, but " + fn + "'s measured mean " +
                formatDuration(st.mean_ns) + " leaves room for it (" + formatDuration(a->room_ns) +
                " not taken by measured calls; " +
                (a->floor_ns > 0 ? "the part backed by data alone is " + formatDuration(a->floor_ns)
                                 : std::string("its count rests on assumptions")) +
                "), so it may already run there";
    out.push_back(d);
  }
}

void regressions(const FunctionInfo& f, const Options& o, std::vector<Diagnostic>& out) {
  const std::optional<Change> c = changeOf(f, o);
  if (!c) return;
  c->regressionWarnings(out);
  const bool context_warns = c->contextWarning(out);
  c->possibleRegression(context_warns, out);
  c->improvement(out);
  c->possiblyNew(out);
}

void hotspots(const FunctionInfo& f, const Options& o, std::vector<Diagnostic>& out) {
  if (f.nodes.empty()) return;
  const detail::NodeValue total = detail::valueOf(f.root(), o);
  if (!total.ns || *total.ns <= 0) return;
  std::vector<std::pair<const Node*, double>> hot;
  for (const Node& n : f.nodes) {
    if (n.kind != NodeKind::Call && n.kind != NodeKind::Loop) continue;
    const detail::NodeValue v = detail::valueOf(n, o);
    const std::optional<double> times = detail::timesPerCall(f, n);
    if (!v.ns || !times) continue;
    const double share = *v.ns * *times / *total.ns;
    if (share >= o.hotspot_share) hot.emplace_back(&n, *v.ns * *times);
  }
  // Report the innermost: a loop is only the hotspot when none of its own nodes is.
  std::vector<bool> covered(f.nodes.size(), false);
  for (const auto& entry : hot) {
    for (const Node* a : detail::ancestors(f, *entry.first)) covered[a - f.nodes.data()] = true;
  }
  for (const auto& [n, cost] : hot) {
    if (covered[n - f.nodes.data()]) continue;
    Diagnostic d;
    d.severity = Severity::Information;
    d.code = "perfhat.hotspot";
    d.range = anchorOf(*n);
    d.message = detail::displayName(f, *n) + " takes " + formatPercent(cost / *total.ns).substr(1) +
                " of " + callText(functionName(f)) + " (" + formatDuration(cost) + " of " +
                formatDuration(*total.ns) + " " + detail::statLabel(o) + ")";
    out.push_back(d);
  }
}

}  // namespace

std::vector<Diagnostic> diagnostics(const Snapshot& s, const Options& o) {
  std::vector<Diagnostic> out;
  for (const analysis::ParseProblem& p : s.problems) {
    out.push_back(
        {p.range, p.error ? Severity::Error : Severity::Warning, "perfhat.parse", problemText(p)});
  }
  for (const FunctionInfo& f : s.functions) {
    regressions(f, o, out);
    if (o.hotspot_diagnostics) hotspots(f, o, out);
  }
  return out;
}

}  // namespace perfhat::features
