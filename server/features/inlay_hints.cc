// textDocument/inlayHint: a short figure after every call, loop header and function signature.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "server/features/derivation_text.h"
#include "server/features/feature_util.h"
#include "server/features/hint_text.h"
#include "server/features/names.h"
#include "server/features/sampled_text.h"

namespace perfhat::features {
namespace detail {
namespace {

std::string joinAssumptions(const analysis::Derivation& d) {
  std::string out;
  for (const analysis::fact::Assumption& a : d.assumptions)
    out += (out.empty() ? "" : "; ") + assumptionText(a);
  return out;
}

std::string staleNote(const Snapshot& s) {
  return s.stale ? "\n(cached data: the feedback handler is unreachable or has not answered yet)"
                 : "";
}

std::string valueText(const NodeValue& v) {
  switch (v.kind) {
    case HintKind::Measured:
      return "⏱ " + formatDuration(*v.ns);
    case HintKind::Predicted:
      return "~⏱ " + formatDuration(*v.ns);
    case HintKind::Unknown:
      return "⏱ ?";
  }
  return "⏱ ?";
}

// Second tooltip line for predicted values: the model and what it assumed.
std::string predictionNote(const analysis::Estimate& e) {
  std::string out = "predicted";
  if (e.derivation.model != analysis::Model::Unstated)
    out += " (" + std::string(modelName(e.derivation.model)) + ")";
  if (e.derivation.hasSummary()) out += ": " + summaryText(e.derivation.summary);
  const std::string assumed = joinAssumptions(e.derivation);
  if (!assumed.empty()) out += "\nassumes " + assumed;
  return out;
}

}  // namespace

std::string statsSummary(const Stats& st, const Options& o) {
  std::string out = statLabel(o) + " " + formatDuration(pick(st, o));
  if (st.p99_ns > 0 && o.main_statistic != "p99") out += " · p99 " + formatDuration(st.p99_ns);
  if (st.rate_per_s > 0) {
    out += " · " + formatCount(st.rate_per_s * 60) + " calls/min";
  } else if (st.count > 0) {
    out += " · " + formatCount(static_cast<double>(st.count)) + " calls";
  }
  return out;
}

HintText hintText(const Snapshot& s, const analysis::FunctionInfo& f, const analysis::Node& n,
                  const Options& o) {
  HintText h;
  const NodeValue v = valueOf(n, o);
  h.kind = v.kind;
  const std::string name = displayName(f, n);

  if (n.kind == analysis::NodeKind::Loop) {
    if (!v.ns) {
      h.label = "⏱ ?";
      h.tooltip = name + ": cost unknown" +
                  (n.loop.iterations ? std::string(" (body has no data)")
                                     : std::string(" (iteration count unknown)"));
    } else if (const std::optional<double> per_iteration = perIteration(f, n, *v.ns, o)) {
      const double per = *per_iteration;
      const std::string iters = (iterationsAssumed(n) ? "~" : "") + formatCount(*n.loop.iterations);
      // A body of negligible parts (no data, no calls or loops) costs no figure: never "× 0 ns".
      const std::string per_text = per > 0 ? formatDuration(per) : std::string("negligible");
      h.label = "≈ " + valueWithUnknown(*v.ns, n.estimate) + " (" + iters + " × " + per_text + ")";
      std::string source = iterationSourceText(n.loop.iteration_source);
      if (n.loop.iteration_source == analysis::IterationSource::ConstantTrip &&
          !n.loop.constant_trip_source.empty())
        source += ": " + tripCountSourceText(n.loop.constant_trip_source);
      h.tooltip = name + ": " + formatCount(*n.loop.iterations) + " iterations (" + source +
                  ") × " + per_text + " per iteration = " + formatDuration(*v.ns) + " " +
                  statLabel(o);
      const std::string assumed = joinAssumptions(n.estimate.derivation);
      if (!assumed.empty()) h.tooltip += "\nassumes " + assumed;
    } else {
      h.label = "≈ " + valueWithUnknown(*v.ns, n.estimate);
      h.tooltip = name + ": " + formatDuration(*v.ns) + " " + statLabel(o) + " in total";
    }
    h.tooltip += staleNote(s);
    return h;
  }

  h.label = valueText(v);
  // A known value that leaves parts without data out is a lower bound, and says so.
  if (v.ns && n.estimate.unknown_parts > 0) h.label += " + ?";
  if (!v.ns) {
    h.tooltip = name + ": no production data and nothing to infer from";
    if (n.estimate.derivation.hasSummary())
      h.tooltip += " (" + summaryText(n.estimate.derivation.summary) + ")";
    h.tooltip += staleNote(s);
    return h;
  }

  // A changed function with production data: show the prediction beside what production says,
  // so the figure after the signature reads as "what this code will cost vs. what it costs now".
  if (n.kind == analysis::NodeKind::Function && v.kind == HintKind::Predicted && n.measured &&
      n.measured->count > 0) {
    if (n.estimate.interval)
      h.label +=
          " (" +
          formatDurationRange(pick(n.estimate.interval->lo, o), pick(n.estimate.interval->hi, o)) +
          ")";
    h.label += " (prod " + formatDuration(pick(*n.measured, o)) + ")";
  }
  if (n.kind == analysis::NodeKind::Branch && n.branch.probability) {
    h.label += " (" + formatCount(*n.branch.probability * 100) + " %)";
  }

  if (v.kind == HintKind::Measured) {
    h.tooltip = name + ": ";
    if (n.measured && n.measured->count > 0) {
      h.tooltip += statsSummary(*n.measured, o) + " (production)";
    } else {
      h.tooltip += statLabel(o) + " " + formatDuration(*v.ns) + " (production)";
    }
    h.label += sampledLabelSuffix(n);
    h.tooltip += sampledTooltipLine(n);
  } else {
    h.tooltip = name + ": " + valueWithUnknown(*v.ns, n.estimate) + " " + statLabel(o) + ", " +
                predictionNote(n.estimate);
  }
  h.tooltip += staleNote(s);
  return h;
}

// Hints that would say nothing, in either profile (the hover still explains the node): a call
// or branch predicted as negligible (bodies without calls or loops), a branch with nothing known
// inside, and a standard-library call without data (a `?` after every `push_back` is noise).
bool carriesInformation(const analysis::Node& n) {
  using analysis::NodeKind;
  using analysis::Provenance;
  const analysis::Estimate& e = n.estimate;
  if ((n.kind == NodeKind::Call || n.kind == NodeKind::Branch) &&
      e.provenance == Provenance::Inferred && e.dist.mean_ns <= 0)
    return false;
  if (n.kind == NodeKind::Branch && !e.known()) return false;
  // Calls, loops and branches made only of bodies without calls or loops: negligible, no data.
  if (n.kind != NodeKind::Function && !e.known() && e.derivation.model == analysis::Model::Leaf)
    return false;
  if (n.kind == NodeKind::Call && !e.known() && n.call.system) return false;
  return true;
}

bool profileShows(const analysis::FunctionInfo& f, const analysis::Node& n, const Options& o) {
  if (!carriesInformation(n)) return false;
  if (o.profile == Profile::Debug) return true;
  if (n.kind == analysis::NodeKind::Function || n.kind == analysis::NodeKind::Loop) return true;
  const NodeValue v = valueOf(n, o);
  if (n.kind == analysis::NodeKind::Call && v.kind == HintKind::Predicted) return true;
  // Anything else only when it is a sizeable share of the function's total.
  const NodeValue total = valueOf(f.root(), o);
  const std::optional<double> times = timesPerCall(f, n);
  if (!v.ns || !total.ns || !times || *total.ns <= 0) return false;
  return *v.ns * *times >= o.design_min_share * *total.ns;
}

}  // namespace detail

std::vector<InlayHint> inlayHints(const Snapshot& s, const Range& range, const Options& o) {
  std::vector<InlayHint> out;
  for (const analysis::FunctionInfo& f : s.functions) {
    if (!detail::overlaps(f.range, range)) continue;
    for (const analysis::Node& n : f.nodes) {
      if (!detail::within(range, n.hint) || !detail::profileShows(f, n, o)) continue;
      // A call in an algorithm's lambda, modelled in f's loop, has its hint from the lambda's
      // own function at the same place; f's loop hint carries the per-element total.
      if (n.call.via_lambda) continue;
      detail::HintText t = detail::hintText(s, f, n, o);
      InlayHint h;
      h.position = n.hint;
      h.label = std::move(t.label);
      h.tooltip = std::move(t.tooltip);
      h.kind = t.kind;
      out.push_back(std::move(h));
    }
  }
  // Stable order and no duplicates (a node listed twice, or two nodes ending at the same place
  // with the same figure), as clangd does for its hints.
  std::stable_sort(out.begin(), out.end(),
                   [](const InlayHint& a, const InlayHint& b) { return a.position < b.position; });
  out.erase(std::unique(out.begin(), out.end(),
                        [](const InlayHint& a, const InlayHint& b) {
                          return a.position == b.position && a.label == b.label;
                        }),
            out.end());
  return out;
}

}  // namespace perfhat::features
