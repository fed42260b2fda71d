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
// The warning sits on the new code responsible: the inferred call (no production data of its
// own at this site) that adds most per call of the function, i.e. its value times the iterations
// of every enclosing loop and the probabilities of enclosing branches. Other inferred calls that
// on their own exceed both thresholds get a warning too.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "server/features/feature_util.h"

namespace perfhat::features {
namespace {

using analysis::FunctionInfo;
using analysis::Node;
using analysis::NodeKind;

Range anchorOf(const Node& n) {
  if (n.kind == NodeKind::Loop || n.kind == NodeKind::Branch) return {n.range.start, n.hint};
  return n.range;
}

// "getTasks() (12.4 ms) × 100 × 3 iterations": how a node's cost multiplies up to the function.
std::string chainText(const FunctionInfo& f, const Node& n, double value) {
  std::string out = detail::displayName(f, n) + " (" + formatDuration(value) + ")";
  // (enclosing node, the child of it on the way to n), innermost first; the same arm rule as
  // detail::timesPerCall: once-evaluated parts and branch conditions do not multiply.
  std::vector<std::pair<const Node*, const Node*>> up;
  const Node* cur = &n;
  for (const Node* a : detail::ancestors(f, n)) {
    up.emplace_back(a, cur);
    cur = a;
  }
  std::reverse(up.begin(), up.end());  // outermost first, as the code reads
  int loops = 0;
  std::string branches;
  for (const auto& [a, child] : up) {
    if (a->kind == NodeKind::Loop && a->iterations && child->arm != -1) {
      out += " × " + formatCount(*a->iterations);
      if (detail::iterationsAssumed(*a)) out += " (assumed)";
      ++loops;
    } else if (a->kind == NodeKind::Branch && child->arm >= 0 && a->armProbability(child->arm) &&
               *a->armProbability(child->arm) != 1) {
      branches += " × " + formatCount(*a->armProbability(child->arm) * 100) + " % branch";
    }
  }
  if (loops > 0) out += " iterations";
  return out + branches;
}

struct Contribution {
  const Node* node;
  double value;  // one execution
  double total;  // per call of the function
};

// z · standard error of the baseline statistic m (see the header), at most learned_relative_max·m.
double noiseAllowance(const Stats& st, const Options& o, double m) {
  if (st.count == 0 || !(st.p90_ns > st.p50_ns)) return 0;
  constexpr double kZ = 2.0;            // two-sided ≈ 95 %
  constexpr double kP90Z = 1.2816;      // normal quantile of p90
  constexpr double kMedianSe = 1.2533;  // SE(median) / SE(mean) = √(π/2)
  const double sigma = (st.p90_ns - st.p50_ns) / kP90Z;
  double se = sigma / std::sqrt(static_cast<double>(st.count));
  if (o.main_statistic != "mean") se *= kMedianSe;  // p50 (p90/p99: at least as uncertain)
  return std::min(kZ * se, o.learned_relative_max * m);
}

void regressions(const FunctionInfo& f, const Options& o, std::vector<Diagnostic>& out) {
  if (!f.changed || f.nodes.empty()) return;
  const Node& root = f.root();
  if (!root.measured || root.measured->count == 0) return;
  const detail::NodeValue p = detail::valueOf(root, o);
  if (!p.ns || p.kind != HintKind::Predicted) return;
  const Stats& st = *root.measured;
  const double m = detail::pick(st, o);
  const double delta = *p.ns - m;

  const double limit = std::max({o.regression_relative * m, o.regression_absolute_ns,
                                 o.learn_thresholds ? noiseAllowance(st, o, m) : 0.0});
  if (!(delta > limit)) return;

  std::vector<Contribution> parts;
  for (const Node& n : f.nodes) {
    if (n.kind != NodeKind::Call || n.estimate.provenance != analysis::Provenance::Inferred) {
      continue;
    }
    const detail::NodeValue v = detail::valueOf(n, o);
    const std::optional<double> times = detail::timesPerCall(f, n);
    if (!v.ns || !times) continue;
    parts.push_back({&n, *v.ns, *v.ns * *times});
  }
  std::stable_sort(parts.begin(), parts.end(),
                   [](const Contribution& a, const Contribution& b) { return a.total > b.total; });

  const std::string fn = f.name + "()";
  const std::string versus = " — " + detail::statLabel(o) + " " + formatDuration(*p.ns) + " vs " +
                             formatDuration(m) + " in production (warns above +" +
                             formatDuration(limit) + ")";
  Diagnostic d;
  d.severity = Severity::Warning;
  d.code = "perfhat.regression";
  d.message = "Predicted +" + formatDuration(delta) + " per call of " + fn + ": ";
  if (parts.empty()) {
    d.range = f.name_range;
    d.message += root.estimate.derivation.summary.empty() ? std::string("body changed")
                                                          : root.estimate.derivation.summary;
  } else {
    d.range = anchorOf(*parts.front().node);
    d.message += chainText(f, *parts.front().node, parts.front().value);
  }
  d.message += versus;
  out.push_back(d);

  for (size_t i = 1; i < parts.size(); ++i) {
    const Contribution& c = parts[i];
    if (!(c.total > limit)) break;  // sorted: none after
    Diagnostic more;
    more.severity = Severity::Warning;
    more.code = "perfhat.regression";
    more.range = anchorOf(*c.node);
    more.message = "Adds ~" + formatDuration(c.total) + " per call of " + fn + ": " +
                   chainText(f, *c.node, c.value);
    out.push_back(more);
  }
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
                " of " + f.name + "() (" + formatDuration(cost) + " of " +
                formatDuration(*total.ns) + " " + detail::statLabel(o) + ")";
    out.push_back(d);
  }
}

}  // namespace

std::vector<Diagnostic> diagnostics(const Snapshot& s, const Options& o) {
  std::vector<Diagnostic> out;
  for (const analysis::ParseProblem& p : s.problems) {
    out.push_back(
        {p.range, p.error ? Severity::Error : Severity::Warning, "perfhat.parse", p.message});
  }
  for (const FunctionInfo& f : s.functions) {
    regressions(f, o, out);
    if (o.hotspot_diagnostics) hotspots(f, o, out);
  }
  return out;
}

}  // namespace perfhat::features
