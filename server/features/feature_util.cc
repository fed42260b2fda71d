#include "server/features/feature_util.h"

#include <algorithm>
#include <cmath>

#include "server/features/names.h"

namespace perfhat::features::detail {
namespace {

template <typename T>
double pickFrom(const T& v, const Options& o) {
  double x = v.p50_ns;
  if (o.main_statistic == "mean") return v.mean_ns;
  if (o.main_statistic == "p90") x = v.p90_ns;
  if (o.main_statistic == "p99") x = v.p99_ns;
  return x == 0 && v.mean_ns != 0 ? v.mean_ns : x;
}

// A range's "size" for innermost-first ordering: later start or earlier end is smaller.
bool inside(const Range& inner, const Range& outer) {
  return !(inner.start < outer.start) && !(outer.end < inner.end);
}

}  // namespace

double pick(const Distribution& d, const Options& o) { return pickFrom(d, o); }
double pick(const Stats& s, const Options& o) { return pickFrom(s, o); }

std::string statLabel(const Options& o) {
  if (o.main_statistic == "mean" || o.main_statistic == "p90" || o.main_statistic == "p99") {
    return o.main_statistic;
  }
  return "p50";
}

NodeValue valueOf(const Node& n, const Options& o) {
  NodeValue v;
  if (n.estimate.known()) {
    const double x = pick(n.estimate.dist, o);
    if (std::isfinite(x)) v.ns = x;
    v.kind = n.estimate.provenance == analysis::Provenance::Measured ? HintKind::Measured
                                                                     : HintKind::Predicted;
  }
  if (!v.ns) v.kind = HintKind::Unknown;
  return v;
}

std::vector<const Node*> ancestors(const FunctionInfo& f, const Node& n) {
  std::vector<const Node*> out;
  int id = n.parent;
  // Bounded by the node count so a malformed parent chain cannot loop forever.
  for (size_t guard = 0; id >= 0 && id < static_cast<int>(f.nodes.size()) && guard < f.nodes.size();
       ++guard) {
    out.push_back(&f.nodes[id]);
    id = f.nodes[id].parent;
  }
  return out;
}

std::optional<double> timesPerCall(const FunctionInfo& f, const Node& n) {
  // Walks the parent chain in place (no allocation: runs for every node of every hint request).
  // A loop's init statement / range expression (arm -1) runs once, not per iteration, and a
  // branch's condition (arm -1) runs whichever arm is taken: neither multiplies.
  double times = 1;
  const Node* cur = &n;
  for (size_t guard = 0;
       cur->parent >= 0 && cur->parent < static_cast<int>(f.nodes.size()) && guard < f.nodes.size();
       ++guard) {
    const Node& a = f.nodes[cur->parent];
    if (a.kind == analysis::NodeKind::Loop && cur->arm != -1) {
      if (!a.loop.iterations) return std::nullopt;
      times *= *a.loop.iterations;
    } else if (a.kind == analysis::NodeKind::Branch && cur->arm >= 0 &&
               a.branch.armProbability(cur->arm)) {
      times *= *a.branch.armProbability(cur->arm);
    }
    cur = &a;
  }
  return times;
}

std::optional<double> perIteration(const FunctionInfo& f, const Node& loop, double total,
                                   const Options& o) {
  if (!loop.loop.iterations || *loop.loop.iterations <= 0) return std::nullopt;
  double once = 0;
  for (int id : loop.children) {
    if (id < 0 || id >= static_cast<int>(f.nodes.size())) continue;
    const Node& c = f.nodes[id];
    if (c.arm == -1 && c.estimate.known()) once += pick(c.estimate.dist, o);
  }
  return std::max(0.0, total - once) / *loop.loop.iterations;
}

std::string addedCostText(const FunctionInfo& f, const analysis::AddedCost& a, const Options& o) {
  using Kind = analysis::CostFactor::Kind;
  const bool valid = a.node >= 0 && a.node < static_cast<int>(f.nodes.size());
  const bool removed = a.status == analysis::AddedCost::Status::Removed;
  std::string out = (removed ? "removed " + callText(a.removed_name)
                     : valid ? displayName(f, f.nodes[a.node])
                             : std::string("call")) +
                    " (" + formatDuration(pick(a.per_execution, o)) + ")";
  // Loops first as the code nests them, then the weights: the product is the same.
  int loops = 0;
  for (const analysis::CostFactor& k : a.factors) {
    if (k.kind != Kind::Iterations) continue;
    out += " × " + formatCount(k.value);
    if (k.assumed) out += " (assumed)";
    ++loops;
  }
  if (loops > 0) out += " iterations";
  for (const analysis::CostFactor& k : a.factors) {
    if (k.kind == Kind::Branch && k.value != 1) {
      out += " × " + formatCount(k.value * 100) + " % branch" + (k.assumed ? "" : " (production)");
    } else if (k.kind == Kind::ProductionCalls && k.value != 1 && k.from < 0) {
      out += " × " + formatCount(k.value) + " production calls per call";
    } else if (k.kind == Kind::ProductionCalls && k.value != 1) {
      const bool named = k.from >= 0 && k.from < static_cast<int>(f.nodes.size());
      out += " × " + formatCount(k.value) + " (production calls of " +
             (named ? displayName(f, f.nodes[k.from]) : std::string("a call")) +
             " in the same block)";
    } else if (k.kind == Kind::ExtraCalls) {
      out += " × " + formatCount(k.value) + " more calls than production counted";
    }
  }
  return out + " = " + (removed ? "−" : "") + formatDuration(pick(a.total, o));
}

std::string valueWithUnknown(double ns, const Estimate& e) {
  return formatDuration(ns) + (e.unknown_parts > 0 ? " + ?" : "");
}

std::string displayName(const FunctionInfo& f, const Node& n) {
  switch (n.kind) {
    case analysis::NodeKind::Function:
      return callText(functionName(f));
    case analysis::NodeKind::Call:
      return callText(n.call.name.empty() ? std::string_view("call") : n.call.name);
    case analysis::NodeKind::Loop:
      switch (n.loop.kind) {
        case analysis::LoopKind::For:
          return "for loop";
        case analysis::LoopKind::RangeFor:
          return "range-for loop";
        case analysis::LoopKind::While:
          return "while loop";
        case analysis::LoopKind::Do:
          return "do-while loop";
      }
      return "loop";
    case analysis::NodeKind::Branch:
      return "branch";
  }
  return "node";
}

std::string iterationSourceText(analysis::IterationSource s) {
  switch (s) {
    case analysis::IterationSource::None:
      return "unknown";
    case analysis::IterationSource::Production:
      return "production loop data";
    case analysis::IterationSource::ProducerSize:
      return "recorded size of the collection";
    case analysis::IterationSource::ConstantTrip:
      return "constant trip count";
    case analysis::IterationSource::Annotation:
      return "your estimate (// perfhat: iterations)";
    case analysis::IterationSource::DataFlow:
      return "insertions into the container above (at most)";
    case analysis::IterationSource::Default:
      return "default, assumed";
  }
  return "unknown";
}

bool iterationsAssumed(const Node& loop) {
  return !loop.loop.iterations ||
         loop.loop.iteration_source == analysis::IterationSource::Default ||
         loop.loop.iteration_source == analysis::IterationSource::None;
}

bool within(const Range& r, Position p) { return !(p < r.start) && !(r.end < p); }

bool overlaps(const Range& a, const Range& b) { return !(a.end < b.start) && !(b.end < a.start); }

Located locate(const Snapshot& s, Position p) {
  Located best;
  for (const FunctionInfo& f : s.functions) {
    if (!within(f.range, p)) continue;
    for (const Node& n : f.nodes) {
      if (!within(n.range, p)) continue;
      if (!best.node || inside(n.range, best.node->range)) best = {&f, &n};
    }
  }
  return best;
}

}  // namespace perfhat::features::detail
