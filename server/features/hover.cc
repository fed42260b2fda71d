// textDocument/hover: everything known about the node under the cursor, as Markdown. Measured
// data shows its statistics; predictions show their derivation (model, inputs, assumptions) and
// distribution; loops show their iterations, where those came from, and what the body costs.
#include <algorithm>
#include <string>
#include <vector>

#include "server/features/derivation_text.h"
#include "server/features/exposure_text.h"
#include "server/features/feature_util.h"
#include "server/features/names.h"
#include "server/features/sampled_text.h"

namespace perfhat::features {
namespace {

using analysis::FunctionInfo;
using analysis::Node;
using analysis::NodeKind;
using analysis::Provenance;
using detail::pick;
using detail::statLabel;

std::string join(const std::vector<std::string>& v, const std::string& sep = ", ") {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

// Markdown table cells must not contain a raw '|'; keys such as `operator|` would break the row.
std::string cell(std::string s) {
  for (size_t i = s.find('|'); i != std::string::npos; i = s.find('|', i + 2))
    s.replace(i, 1, "\\|");
  return s;
}

std::string windowText(const TimeWindow& w) {
  if (w.from.empty() && w.to.empty()) return "";
  return (w.from.empty() ? "…" : w.from) + " → " + (w.to.empty() ? "now" : w.to);
}

void statsTable(std::string& md, const Node& n, analysis::MatchKind match, const Options& o) {
  const Stats& st = *n.measured;
  // A predicted call carries the callee's overall data (other callers): say so, so it is not
  // read as data for this call site.
  const bool other_sites =
      n.kind == NodeKind::Call && n.estimate.provenance == Provenance::Inferred;
  md += other_sites ? "| production (callee, all callers) | |\n|---|---|\n"
                    : "| production | |\n|---|---|\n";
  std::string calls = formatCount(static_cast<double>(st.count));
  if (st.count > 0) {
    calls += " (" + formatCount(static_cast<double>(st.errors)) + " errors · " +
             (st.errors == 0 ? std::string("0 %")
                             : formatPercent(static_cast<double>(st.errors) / st.count).substr(1)) +
             ")";
  }
  md += "| calls | " + calls + " |\n";
  if (n.dropped_calls > 0) {
    md += "| lost in export | ≥ " + formatCount(n.dropped_calls) +
          " calls of its service in this window: counts and rates may be low |\n";
  }
  if (n.exposure) md += exposureRows(*n.exposure);
  md += detail::sampledHoverRow(n);
  if (st.rate_per_s > 0) md += "| rate | " + formatCount(st.rate_per_s * 60) + " calls/min |\n";
  md += "| mean | " + formatDuration(st.mean_ns) + " |\n";
  md += "| p50 · p90 · p95 · p99 | " + formatDuration(st.p50_ns) + " · " +
        formatDuration(st.p90_ns) + " · " + formatDuration(st.p95_ns) + " · " +
        formatDuration(st.p99_ns) + " |\n";
  if (st.max_ns > 0) {
    md += "| min · max | " + formatDuration(st.min_ns) + " · " + formatDuration(st.max_ns) + " |\n";
  }
  if (const std::string w = windowText(st.window); !w.empty()) md += "| window | " + w + " |\n";
  if (n.baseline && n.baseline->count > 0) {
    const double base = pick(*n.baseline, o);
    const double now = pick(st, o);
    md += "| baseline | " + statLabel(o) + " " + formatDuration(base);
    if (base > 0) md += " (" + formatPercent(now / base - 1) + " now)";
    if (const std::string w = windowText(n.baseline->window); !w.empty()) md += ", " + w;
    md += " |\n";
  }
  if (!n.versions.empty()) md += "| versions | " + cell(join(n.versions)) + " |\n";
  if (!n.hosts.empty()) md += "| hosts | " + cell(join(n.hosts)) + " |\n";
  if (match != analysis::MatchKind::None)
    md += "| matched by | " + cell(std::string(matchKindText(match))) + " |\n";
  md += "\n";
}

// The items behind an aggregated value, each with its own numbers: the instantiations of a
// template (or the overloads of a name) a definition matched, the implementations a virtual
// call reached.
void partsTable(std::string& md, const std::string& title,
                const std::vector<analysis::MatchedPart>& parts) {
  if (parts.size() < 2) return;
  md += "| " + title + " | calls | mean |\n|---|---|---|\n";
  for (const auto& p : parts) {
    md += "| `" + cell(p.key) + "` | ";
    md += p.stats ? formatCount(static_cast<double>(p.stats->count)) + " | " +
                        formatDuration(p.stats->mean_ns)
                  : std::string("? | ?");
    md += " |\n";
  }
  md += "\n";
}

void derivationBlock(std::string& md, const analysis::Estimate& e) {
  const analysis::Derivation& d = e.derivation;
  md += "**Prediction**";
  if (d.model != analysis::Model::Unstated)
    md += " — model `" + std::string(modelName(d.model)) + "`";
  if (d.hasSummary()) md += ": " + summaryText(d.summary);
  md += "\n\n";
  if (!d.inputs.empty()) {
    md += "Inputs:\n";
    for (const analysis::fact::Input& i : d.inputs) md += "- " + inputText(i) + "\n";
    md += "\n";
  }
  if (!d.assumptions.empty()) {
    md += "Assumptions:\n";
    for (const analysis::fact::Assumption& a : d.assumptions) md += "- " + assumptionText(a) + "\n";
    md += "\n";
  }
  if (!e.known()) return;
  const analysis::Distribution& dist = e.dist;
  md += "Distribution: mean " + formatDuration(dist.mean_ns) + " · p50 " +
        formatDuration(dist.p50_ns) + " · p90 " + formatDuration(dist.p90_ns) + " · p99 " +
        formatDuration(dist.p99_ns);
  md += dist.samples > 0 ? " (" + formatCount(static_cast<double>(dist.samples)) + " samples)"
                         : std::string(" (no samples: derived from assumptions)");
  md += "\n\n";
}

// What one iteration of a loop spends, child by child, most expensive first.
void loopBody(std::string& md, const FunctionInfo& f, const Node& loop, const Options& o) {
  struct Row {
    std::string name;
    detail::NodeValue v;
  };
  std::vector<Row> rows;
  for (int id : loop.children) {
    if (id < 0 || id >= static_cast<int>(f.nodes.size())) continue;
    const Node& c = f.nodes[id];
    rows.push_back(
        {detail::displayName(f, c) + (c.arm == -1 ? " (once)" : ""), detail::valueOf(c, o)});
  }
  if (rows.empty()) return;
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    return a.v.ns.value_or(-1) > b.v.ns.value_or(-1);
  });
  md += "Body, per iteration:\n";
  for (const Row& r : rows) {
    md += "- " + r.name + " ";
    if (!r.v.ns) {
      md += "`?`";
    } else {
      md += (r.v.kind == HintKind::Predicted ? "~" : "") + formatDuration(*r.v.ns);
    }
    md += "\n";
  }
  md += "\n";
}

// The costs inference added to a measured function (or, on a call, the one this call adds), with
// the factors the warning prints: the same derivation, so their figures agree.
void addedCosts(std::string& md, const FunctionInfo& f, const Node& n, const Options& o) {
  using Status = analysis::AddedCost::Status;
  std::string counted, possibly, removed;
  for (const analysis::AddedCost& a : f.added) {
    if (n.kind != NodeKind::Function && a.node != n.id) continue;
    std::string& list = a.status == Status::New       ? counted
                        : a.status == Status::Removed ? removed
                                                      : possibly;
    list += "- " + detail::addedCostText(f, a, o) +
            (a.status == Status::Removed && a.removed_line >= 0
                 ? " (line " + std::to_string(a.removed_line + 1) + " in production)"
                 : std::string()) +
            "\n";
  }
  const std::string per = " (" + statLabel(o) + " per call of " + functionName(f) + "())";
  if (n.kind == NodeKind::Function && f.deployed != analysis::DeployedBody::Unknown &&
      !f.deployed_revision.empty()) {
    const std::string rev = f.deployed_revision.substr(0, 12);
    md += f.deployed == analysis::DeployedBody::Identical
              ? "Identical to what production ran (" + rev + ").\n\n"
          : f.deployed == analysis::DeployedBody::Changed
              ? "Changed since what production ran (" + rev + "): measured − removed + new.\n\n"
              : "Not in what production ran (" + rev + ").\n\n";
  }
  if (!counted.empty()) md += "New cost counted in the prediction" + per + ":\n" + counted + "\n";
  if (!removed.empty()) md += "Gone since production, subtracted" + per + ":\n" + removed + "\n";
  if (!possibly.empty()) {
    md += "Possibly new, not counted" + per +
          ": no call-site data, but the function's measured time leaves room for it, so it may "
          "already run in production:\n" +
          possibly + "\n";
  }
}

const FunctionInfo* findFunction(const Snapshot& s, const std::string& key) {
  if (key.empty()) return nullptr;
  for (const FunctionInfo& f : s.functions) {
    if (f.key == key) return &f;
  }
  return nullptr;
}

// The part of a node that names it: a function's declarator name, a loop's or branch's header,
// a call's whole extent. Hovering in a body elsewhere shows nothing, so the hover never covers a
// whole function.
std::optional<Range> hoverRange(const FunctionInfo& f, const Node& n, Position p) {
  switch (n.kind) {
    case NodeKind::Function:
      if (!detail::within(f.name_range, p)) return std::nullopt;
      return f.name_range;
    case NodeKind::Loop:
    case NodeKind::Branch:
      if (n.hint < p) return std::nullopt;
      return Range{n.range.start, n.hint};
    case NodeKind::Call:
      return n.range;
  }
  return std::nullopt;
}

// The headline figure: what is known of the node (measured, predicted with its likely range,
// or `?`) and what it covers.
void headline(std::string& md, const Node& n, const detail::NodeValue& v, const Options& o) {
  const std::string what = n.kind == NodeKind::Function ? " per call"
                           : n.kind == NodeKind::Loop   ? " for the whole loop"
                           : n.kind == NodeKind::Branch ? " (weighted by probability)"
                                                        : " per call";
  if (!v.ns && n.exposure && unprobed(*n.exposure)) {
    md += "**⏱ ?** — " + unprobedText(*n.exposure) + ". Shown as `?`, never counted as 0.\n\n";
  } else if (!v.ns) {
    md +=
        "**⏱ ?** — no production data and nothing to infer from. Shown as `?`, never counted "
        "as 0.\n\n";
  } else if (n.exposure && unprobed(*n.exposure)) {
    md += "**~⏱ " + statLabel(o) + " " + detail::valueWithUnknown(*v.ns, n.estimate) + "**" + what +
          " — predicted; " + unprobedText(*n.exposure) + "\n\n";
  } else if (v.kind == HintKind::Measured) {
    md += "**⏱ " + statLabel(o) + " " + formatDuration(*v.ns) + "**" + what +
          " — measured in production\n\n";
  } else {
    md += "**~⏱ " + statLabel(o) + " " + detail::valueWithUnknown(*v.ns, n.estimate) + "**" + what +
          " — predicted";
    if (n.estimate.unknown_parts > 0) {
      md += "; at least this: " + std::to_string(n.estimate.unknown_parts) +
            " part(s) without data are not counted";
    }
    md += "\n\n";
    if (n.estimate.interval)
      md +=
          "Likely range " +
          formatDurationRange(pick(n.estimate.interval->lo, o), pick(n.estimate.interval->hi, o)) +
          " (about p10–p90: the measurement's uncertainty and each cost's range)\n\n";
  }
}

// A changed function that production measured: the prediction against the measurement.
void changedFunction(std::string& md, const FunctionInfo& f, const Node& n,
                     const detail::NodeValue& v, const Options& o) {
  if (n.kind == NodeKind::Function && f.changed && n.measured && v.ns &&
      v.kind == HintKind::Predicted) {
    const double measured = pick(*n.measured, o);
    md += "Code changed: predicted " + formatDuration(*v.ns) + " vs " + formatDuration(measured) +
          " in production";
    if (measured > 0) md += " (" + formatPercent(*v.ns / measured - 1) + ")";
    md += ".\n\n";
  }
}

// A loop's iterations, where they came from and what one of them costs, then its body.
void loopBlock(std::string& md, const FunctionInfo& f, const Node& n, const detail::NodeValue& v,
               const Options& o) {
  if (n.loop.iterations) {
    md += "Iterations: **" + formatCount(*n.loop.iterations) + "** (" +
          detail::iterationSourceText(n.loop.iteration_source);
    if (n.loop.iteration_source == analysis::IterationSource::ConstantTrip &&
        !n.loop.constant_trip_source.empty())
      md += ": `" + tripCountSourceText(n.loop.constant_trip_source) + "`";
    md += ")";
    if (v.ns) {
      if (const auto per = detail::perIteration(f, n, *v.ns, o)) {
        md += " × " + (*per > 0 ? formatDuration(*per) : std::string("negligible")) +
              " per iteration";
      }
    }
    md += "\n\n";
  } else {
    md +=
        "Iterations: **?** — no loop data, no collection size, no constant bound. Add "
        "`// perfhat: iterations=N` above the loop.\n\n";
  }
  loopBody(md, f, n, o);
}

// Production's statistics of the node, with how its function (or a call's callee) was matched.
void productionStats(std::string& md, const Snapshot& s, const FunctionInfo& f, const Node& n,
                     const Options& o) {
  if (!n.measured || n.measured->count == 0) return;
  analysis::MatchKind match = analysis::MatchKind::None;
  if (n.kind == NodeKind::Function) {
    match = f.match;
  } else if (const FunctionInfo* callee = findFunction(s, n.call.key)) {
    match = callee->match;
  }
  statsTable(md, n, match, o);
}

}  // namespace

std::optional<HoverResult> hover(const Snapshot& s, Position p, const Options& o) {
  const detail::Located at = detail::locate(s, p);
  if (!at.node) return std::nullopt;
  const FunctionInfo& f = *at.function;
  const Node& n = *at.node;
  const std::optional<Range> range = hoverRange(f, n, p);
  if (!range) return std::nullopt;

  HoverResult r;
  r.range = *range;
  const detail::NodeValue v = detail::valueOf(n, o);
  std::string& md = r.markdown;
  md += "### " + detail::displayName(f, n) + "\n\n";
  if (n.kind == NodeKind::Call && !n.call.key.empty()) md += "`" + n.call.key + "`\n\n";
  if (n.kind == NodeKind::Function && !f.key.empty()) md += "`" + f.key + "`\n\n";
  headline(md, n, v, o);
  changedFunction(md, f, n, v, o);
  addedCosts(md, f, n, o);
  if (n.kind == NodeKind::Loop) loopBlock(md, f, n, v, o);
  if (n.kind == NodeKind::Branch && n.branch.probability) {
    md += "Taken with probability " + formatCount(*n.branch.probability * 100) + " %\n\n";
  }
  productionStats(md, s, f, n, o);
  if (n.kind == NodeKind::Call && n.call.callee_changed) {
    md += "⚠ " + changedBodyText(*n.call.callee_changed) + "\n\n";
  }
  if (n.kind == NodeKind::Function) partsTable(md, "ran as", f.matched);
  if (n.kind == NodeKind::Call) partsTable(md, "implementations (overall)", n.call.implementations);
  if (n.estimate.provenance == Provenance::Inferred ||
      (!n.estimate.known() && !n.estimate.derivation.assumptions.empty())) {
    derivationBlock(md, n.estimate);
  }
  if (s.stale)
    md += "_Cached data: the feedback handler is unreachable or has not answered yet._\n";
  while (!md.empty() && md.back() == '\n') md.pop_back();
  md += "\n";
  return r;
}

}  // namespace perfhat::features
