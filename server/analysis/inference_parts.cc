#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "common/function_key.h"
#include "server/analysis/inference_parts.h"

namespace perfhat::analysis::inference_detail {
namespace {

// Callers as the runtime spelled them, normalized once per analysis (hot: every call node).
const std::string& canonicalCaller(const std::string& caller,
                                   std::unordered_map<std::string, std::string>& cache) {
  auto it = cache.find(caller);
  if (it == cache.end()) it = cache.emplace(caller, normalizeFunctionKey(caller)).first;
  return it->second;
}

}  // namespace

Distribution fromCallSite(const CallSiteStats& c) {
  return Distribution{c.mean_ns, c.p50_ns > 0 ? c.p50_ns : c.mean_ns,
                      c.p90_ns > 0 ? c.p90_ns : c.mean_ns, c.p99_ns > 0 ? c.p99_ns : c.mean_ns,
                      c.count};
}

// The relative half-width of a z-range around a mean measured over `count` calls: z·SE/mean, with
// σ from the spread as (p90 − p50) / 1.2816 (the normal p90 lies 1.2816 σ above the median).
double relativeError(double mean, double p50, double p90, uint64_t count, double z) {
  if (mean <= 0) return 0;
  return std::min(1.0, z * standardErrorOfMean(p50, p90, count) / mean);
}

void setSpread(Estimate& e, double rel) {
  e.spread_lo = 1 - rel;
  e.spread_hi = 1 + rel;
}

double driftShare(const Node& root, const AnalysisOptions& options) {
  double drift = options.drift_share;
  if (root.measured && root.baseline && root.baseline->count > 0 && root.baseline->mean_ns > 0 &&
      root.measured->count > 0 && root.baseline->window != root.measured->window)
    drift = std::max(
        drift, std::abs(root.measured->mean_ns - root.baseline->mean_ns) / root.baseline->mean_ns);
  return std::min(1.0, drift);
}

double slowOutcome(const Stats& s, double ratio) {
  if (!(s.p50_ns > 0)) return 0;
  if (s.p90_ns >= ratio * s.p50_ns) return s.p90_ns;
  if (s.p99_ns >= ratio * s.p50_ns) return s.p99_ns;
  return 0;
}

double fastOutcome(const Stats& s, double ratio) {
  if (slowOutcome(s, ratio) > 0) return s.p50_ns;
  if (s.min_ns > 0 && s.p50_ns >= ratio * s.min_ns) return s.min_ns;
  return 0;
}

double loadingOutcome(const Stats& s, double ratio) {
  if (const double slow = slowOutcome(s, ratio); slow > 0) return slow;
  return fastOutcome(s, ratio) > 0 ? s.p50_ns : 0;
}

std::optional<double> loadedOutcome(const Stats& s, double ratio) {
  if (s.count > 0 && s.p50_ns > 0 && s.min_ns == 0 && s.mean_ns < s.p50_ns) return 0.0;
  if (const double fast = fastOutcome(s, ratio); fast > 0) return fast;
  return std::nullopt;
}

int loopScope(const FunctionInfo& fn, const Node& n, bool certain) {
  const Node* p = &n;
  while (p->parent >= 0 && p->parent < static_cast<int>(fn.nodes.size())) {
    const Node& up = fn.nodes[p->parent];
    if (up.kind == NodeKind::Loop && p->arm != -1) return up.id;
    if (certain && up.kind == NodeKind::Branch && p->arm != -1) return -1;
    p = &up;
  }
  return 0;
}

// The range of one cost: its per-execution spread times its factors' ranges.
void setRange(AddedCost& a, const Estimate& per) {
  double lo = per.spread_lo, hi = per.spread_hi;
  for (const CostFactor& f : a.factors) {
    lo *= f.lo;
    hi *= f.hi;
  }
  a.total_lo = scaleDist(a.per_execution, lo);
  a.total_hi = scaleDist(a.per_execution, hi);
}

AddedCost addedCost(const Estimate& per, std::vector<CostFactor> factors) {
  AddedCost a;
  a.per_execution = per.dist;
  a.factors = std::move(factors);
  a.executions = product(a.factors, false);
  a.total = scaleDist(a.per_execution, a.executions);
  setRange(a, per);
  a.floor_ns = per.floor_mean_ns * product(a.factors, true);
  return a;
}

fact::CallName callName(const Node& n) {
  return {n.call.name, n.call.name.empty() ? n.call.key : std::string()};
}

void attach(Node& n, const FeedbackItem& item) {
  n.measured = item.stats;
  n.baseline = item.baseline;
  n.versions = item.versions;
  n.hosts = item.hosts;
  n.dropped_calls = item.dropped_calls;
  n.exposure = item.exposure;
  n.sampled_calls = item.sampled_calls;
  n.sampled_records = item.sampled_records;
}

const CallSiteStats* callSiteFrom(const FeedbackItem& callee, const FunctionInfo& caller,
                                  std::unordered_map<std::string, std::string>& cache) {
  for (const auto& c : callee.callsites) {
    if (c.caller == caller.key || (!caller.mangled.empty() && c.caller == caller.mangled) ||
        canonicalCaller(c.caller, cache) == caller.key)
      return &c;
  }
  return nullptr;
}

// `data_only`: the count a call can be held to when deciding whether it is new. An assumed loop
// count is unbounded guesswork and counts 0; a branch prior stays, because it is a probability
// (at most 1), the analysis's stated expectation for the arm, and the warning names it.
double product(const std::vector<CostFactor>& factors, bool data_only) {
  double k = 1;
  for (const CostFactor& f : factors) {
    const bool dropped = data_only && f.assumed && f.kind != CostFactor::Kind::Branch;
    k *= dropped ? 0 : f.value;
  }
  return k;
}

std::vector<double> factorValues(const AddedCost& a) {
  std::vector<double> out;
  for (const CostFactor& f : a.factors) out.push_back(f.value);
  return out;
}

bool isLeaf(const Estimate& e) { return !e.known() && e.derivation.model == Model::Leaf; }

// The estimate of a part made only of bodies without calls or loops: negligible, stated, and
// shown as "no data" rather than as a figure of 0.
Estimate negligibleEstimate(NodeKind kind, const std::string& function) {
  Estimate e;
  e.derivation.model = Model::Leaf;
  e.derivation.summary = fact::Negligible{};
  e.derivation.assumptions.push_back(fact::NegligibleBody{kind, function});
  return e;
}

namespace {

// Producers a loop of `f` ranges over by calling them directly (`for (t : r.tasks())`).
void addDirectProducers(const FunctionInfo& f, std::set<std::string>& out) {
  for (const Node& n : f.nodes)
    if (n.kind == NodeKind::Loop && !n.loop.producer_key.empty() && n.loop.range_var_name.empty())
      out.insert(n.loop.producer_key);
}

}  // namespace

// Where each node sits, as a path of what encloses it: kind, callee or loop source, a branch's
// condition, and the arm of its parent. Two versions of a function share a node exactly when they
// share its path, so a call moved into a loop or behind a guard, or under a condition that
// changed, is one call gone and one call new.
std::vector<std::string> nodePaths(const FunctionInfo& f, const FunctionInfo& other) {
  std::set<std::string> direct;
  addDirectProducers(f, direct);
  addDirectProducers(other, direct);
  std::vector<std::string> path(f.nodes.size());
  for (const Node& n : f.nodes) {  // pre-order: a parent precedes its children
    std::string own;
    switch (n.kind) {
      case NodeKind::Function:
        own = "F";
        break;
      case NodeKind::Call:
        own = "C:" + (n.call.key.empty() ? n.call.name : n.call.key);
        break;
      case NodeKind::Loop:
        // A loop is the collection it goes over: a range over a local holding a producer's
        // result is the same loop as one over the producer's call (or an algorithm's over it).
        // Two locals holding results of the same producer are two collections.
        own = "L" + std::to_string(static_cast<int>(n.loop.kind)) + ":" + n.loop.producer_key +
              ":" + (direct.count(n.loop.producer_key) > 0 ? std::string() : n.loop.range_var_name);
        break;
      case NodeKind::Branch:
        own = "B" + std::to_string(n.branch.arms) + "(" + n.branch.condition + ")";
        break;
    }
    own += "@" + std::to_string(n.arm);
    path[n.id] = n.parent >= 0 && n.parent < n.id ? path[n.parent] + "/" + own : own;
  }
  return path;
}

std::vector<bool> callsAtDeployedPlace(const FunctionInfo& now, const FunctionInfo& deployed) {
  const std::vector<std::string> now_path = nodePaths(now, deployed),
                                 old_path = nodePaths(deployed, now);
  std::unordered_map<std::string, int> old_calls;
  for (const Node& o : deployed.nodes)
    if (o.kind == NodeKind::Call) ++old_calls[old_path[o.id]];
  std::vector<bool> kept(now.nodes.size(), false);
  for (const Node& n : now.nodes) {
    if (n.kind != NodeKind::Call) continue;
    auto it = old_calls.find(now_path[n.id]);
    if (it != old_calls.end() && it->second > 0) {
      --it->second;
      kept[n.id] = true;
    }
  }
  return kept;
}

Distribution subtractDist(const Distribution& a, const Distribution& b) {
  Distribution d = a;
  d.mean_ns = std::max(0.0, a.mean_ns - b.mean_ns);
  d.p50_ns = std::max(0.0, a.p50_ns - b.p50_ns);
  d.p90_ns = std::max(0.0, a.p90_ns - b.p90_ns);
  d.p99_ns = std::max(0.0, a.p99_ns - b.p99_ns);
  return d;
}

}  // namespace perfhat::analysis::inference_detail
