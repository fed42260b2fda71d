// Test helper (tests only): builds analysis snapshots by hand, the way the analysis engine
// would, and the T4 scenario of the paper (a getter inside two nested loops).
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "server/analysis/snapshot.h"

namespace perfhat::features::testing {

using analysis::Estimate;
using analysis::FunctionInfo;
using analysis::IterationSource;
using analysis::LoopKind;
using analysis::Node;
using analysis::NodeKind;
using analysis::Position;
using analysis::Provenance;
using analysis::Range;
using analysis::Snapshot;

// The range of the first `needle` on `line` of `text` (0-based), so fixtures stay readable.
inline Range find(std::string_view text, int line, std::string_view needle) {
  size_t start = 0;
  for (int i = 0; i < line; ++i) start = text.find('\n', start) + 1;
  const size_t end = text.find('\n', start);
  const std::string_view l = text.substr(start, end == std::string_view::npos ? end : end - start);
  const size_t col = l.find(needle);
  if (col == std::string_view::npos) throw std::logic_error("fixture: needle not on line");
  return {{line, static_cast<int>(col)}, {line, static_cast<int>(col + needle.size())}};
}

inline Stats stats(uint64_t count, double p50, double p90, double p99, double rate_per_s = 0) {
  Stats s;
  s.count = count;
  s.errors = count / 400;
  s.mean_ns = p50 * 1.1;
  s.min_ns = p50 / 4;
  s.max_ns = p99 * 2;
  s.p50_ns = p50;
  s.p90_ns = p90;
  s.p95_ns = (p90 + p99) / 2;
  s.p99_ns = p99;
  s.rate_per_s = rate_per_s;
  s.window = {"2026-11-21T00:00:00Z", "2026-11-22T00:00:00Z"};
  return s;
}

inline Estimate measured(const Stats& s) {
  Estimate e;
  e.provenance = Provenance::Measured;
  e.dist = {s.mean_ns, s.p50_ns, s.p90_ns, s.p99_ns, s.count};
  e.derivation.model = analysis::Model::Measured;
  return e;
}

inline Estimate inferred(double p50, analysis::Model model, analysis::fact::Summary summary = {},
                         std::vector<analysis::fact::Input> inputs = {},
                         std::vector<analysis::fact::Assumption> assumptions = {},
                         uint64_t samples = 0) {
  Estimate e;
  e.provenance = Provenance::Inferred;
  e.dist = {p50 * 1.1, p50, p50 * 1.5, p50 * 3, samples};
  e.derivation = {model, std::move(summary), std::move(inputs), std::move(assumptions)};
  return e;
}

inline Estimate unknown(analysis::fact::Summary why = {}) {
  Estimate e;
  e.derivation.summary = std::move(why);
  return e;
}

class FunctionBuilder {
 public:
  FunctionBuilder(std::string name, std::string key, Range range, Range name_range, Position hint) {
    f_.name = std::move(name);
    f_.key = std::move(key);
    f_.range = range;
    f_.name_range = name_range;
    Node root;
    root.kind = NodeKind::Function;
    root.range = range;
    root.hint = hint;
    f_.nodes.push_back(root);
  }
  FunctionBuilder& match(analysis::MatchKind m) {
    f_.match = m;
    return *this;
  }
  FunctionBuilder& changed(bool c = true) {
    f_.changed = c;
    return *this;
  }
  FunctionBuilder& total(Estimate e, std::optional<Stats> m = std::nullopt) {
    f_.nodes[0].estimate = std::move(e);
    f_.nodes[0].measured = m;
    if (m) {
      f_.nodes[0].versions = {"1.4.2", "1.4.3"};
      f_.nodes[0].hosts = {"app-1", "app-2"};
    }
    return *this;
  }
  int call(int parent, std::string callee, Range r, Estimate e,
           std::optional<Stats> m = std::nullopt) {
    Node n = base(parent, NodeKind::Call, r, r.end);
    n.call.name = callee;
    n.call.key = "agile::" + callee + "()";
    n.estimate = std::move(e);
    n.measured = m;
    if (m) {
      n.versions = {"1.4.2"};
      n.hosts = {"app-1"};
    }
    return add(std::move(n));
  }
  int loop(int parent, LoopKind kind, Range r, Position hint, std::optional<double> iterations,
           IterationSource src, Estimate e) {
    Node n = base(parent, NodeKind::Loop, r, hint);
    n.loop.kind = kind;
    n.loop.iterations = iterations;
    n.loop.iteration_source = src;
    n.estimate = std::move(e);
    int ordinal = 0;
    for (const Node& o : f_.nodes) ordinal += o.kind == NodeKind::Loop;
    n.loop.ordinal = ordinal;
    return add(std::move(n));
  }
  int branch(int parent, Range r, Position hint, double probability, Estimate e) {
    Node n = base(parent, NodeKind::Branch, r, hint);
    n.branch.probability = probability;
    n.estimate = std::move(e);
    return add(std::move(n));
  }
  // Records the cost `call` adds to the measured total (FunctionInfo::added), as inference does.
  FunctionBuilder& added(int call, std::vector<analysis::CostFactor> factors,
                         analysis::AddedCost::Status status = analysis::AddedCost::Status::New) {
    analysis::AddedCost a;
    a.status = status;
    a.node = call;
    a.per_execution = f_.nodes[call].estimate.dist;
    a.factors = std::move(factors);
    for (const analysis::CostFactor& k : a.factors) a.executions *= k.value;
    a.total = a.per_execution;
    for (double* v : {&a.total.mean_ns, &a.total.p50_ns, &a.total.p90_ns, &a.total.p99_ns})
      *v *= a.executions;
    a.floor_ns = status == analysis::AddedCost::Status::New ? a.total.mean_ns : 0;
    if (f_.nodes[0].measured) a.room_ns = f_.nodes[0].measured->mean_ns;
    f_.added.push_back(std::move(a));
    return *this;
  }
  Node& node(int id) { return f_.nodes[id]; }
  FunctionInfo build() const { return f_; }

 private:
  Node base(int parent, NodeKind kind, Range r, Position hint) {
    Node n;
    n.kind = kind;
    n.range = r;
    n.hint = hint;
    n.parent = parent;
    return n;
  }
  int add(Node n) {
    n.id = static_cast<int>(f_.nodes.size());
    f_.nodes[n.parent].children.push_back(n.id);
    f_.nodes.push_back(std::move(n));
    return f_.nodes.back().id;
  }
  FunctionInfo f_;
};

// T4 (paper §V): the developer adds a lazily loaded getter inside two nested loops.
//   stories()   measured 3 ms, called once
//   for stories (100 iterations, production loop data)
//     storyPoints(s)  measured 1.5 ms
//     for 3 passes (constant trip count)
//       getTasks()    no call-site data: predicted 12.4 ms from the callee's overall data
// Function: measured p50 410 ms in production; predicted 410 ms + 100 × 3 × 12.4 ms = 4.13 s,
// the new getter's cost added to the measured total (as inference records it in `added`).
inline constexpr std::string_view kT4Source =
    "#include \"agile/backlog.h\"\n"
    "\n"
    "int BacklogService::listStories(const Backlog& backlog) {\n"
    "  int total = 0;\n"
    "  for (const Story& s : backlog.stories()) {\n"
    "    total += storyPoints(s);\n"
    "    for (int pass = 0; pass < 3; ++pass) {\n"
    "      total += s.getTasks().size();\n"
    "    }\n"
    "  }\n"
    "  return total;\n"
    "}\n";

struct T4 {
  static constexpr double kStories = 3e6, kPoints = 1.5e6, kTasks = 12.4e6;
  static constexpr double kInner = 3 * kTasks;                // 37.2 ms
  static constexpr double kOuter = 100 * (kPoints + kInner);  // 3.87 s
  static constexpr double kMeasured = 410e6;
  static constexpr double kNew = 100 * 3 * kTasks;    // 3.72 s
  static constexpr double kTotal = kMeasured + kNew;  // 4.13 s
  int outer, stories, points, inner, tasks;
  Snapshot snapshot;
  Range stories_range, outer_header, tasks_range;

  T4() {
    const std::string_view t = kT4Source;
    const Range sig = find(t, 2, "int BacklogService::listStories(const Backlog& backlog)");
    FunctionBuilder b("listStories", "agile::BacklogService::listStories(const agile::Backlog &)",
                      {{2, 0}, {11, 1}}, find(t, 2, "listStories"), sig.end);
    b.match(analysis::MatchKind::Exact)
        .changed()
        .total(
            inferred(kTotal, analysis::Model::Sum, analysis::fact::MeasuredPlusNew{kMeasured, kNew},
                     {{{}, analysis::fact::MeasuredTotal{kMeasured}},
                      {{},
                       analysis::fact::ChangedCall{
                           analysis::fact::CallChange::New, {"getTasks", ""}, {100, 3}, kTasks}}}),
            stats(1200, kMeasured, 500e6, 900e6, 20));
    // As the analysis builds them: the hint of a loop or branch is where its body starts, and
    // the range expression is a child of the loop evaluated once (arm -1).
    outer_header = {{4, 2}, find(t, 4, "{").start};
    outer = b.loop(
        0, LoopKind::RangeFor, {{4, 2}, {9, 3}}, outer_header.end, 100, IterationSource::Production,
        inferred(kStories + kOuter, analysis::Model::Loop,
                 analysis::fact::LoopProduct{100, analysis::fact::LoopProduct::Body::Known,
                                             kPoints + kInner},
                 {{{}, analysis::fact::Iterations{100, IterationSource::Production, 1200}}}));
    stories_range = find(t, 4, "backlog.stories()");
    stories = b.call(outer, "stories", stories_range, measured(stats(1200, kStories, 4e6, 9e6, 20)),
                     stats(1200, kStories, 4e6, 9e6, 20));
    b.node(stories).arm = -1;
    points = b.call(outer, "storyPoints", find(t, 5, "storyPoints(s)"),
                    measured(stats(5000, kPoints, 2e6, 4e6)), stats(5000, kPoints, 2e6, 4e6));
    inner = b.loop(
        outer, LoopKind::For, {{6, 4}, {8, 5}}, find(t, 6, "{").start, 3,
        IterationSource::ConstantTrip,
        inferred(kInner, analysis::Model::Loop,
                 analysis::fact::LoopProduct{3, analysis::fact::LoopProduct::Body::Known, kTasks}));
    tasks_range = find(t, 7, "s.getTasks()");
    tasks = b.call(
        inner, "getTasks", tasks_range,
        inferred(kTasks, analysis::Model::CalleeOverall,
                 analysis::fact::CalleeOverall{kTasks * 1.1, {"getTasks", ""}, 300},
                 {{{}, analysis::fact::CalleeStats{{"getTasks", ""}, kTasks * 1.1, kTasks * 3}}},
                 {analysis::fact::NoCallSiteData{}}, 300));
    b.added(tasks, {{analysis::CostFactor::Kind::Iterations, 100, outer, false},
                    {analysis::CostFactor::Kind::Iterations, 3, inner, false}});
    snapshot.path = "/src/agile/backlog_service.cc";
    snapshot.version = 3;
    snapshot.functions.push_back(b.build());
  }
  const FunctionInfo& fn() const { return snapshot.functions.front(); }
};

inline Range everything() { return {{0, 0}, {1 << 20, 0}}; }

}  // namespace perfhat::features::testing
