// Diff-aware prediction (DESIGN §10, "What production ran"): the code as written against the
// body production ran, node by node, and the likely range of the result.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <deque>
#include <limits>
#include <vector>

#include "common/function_key.h"
#include "server/analysis/inference_parts.h"

namespace perfhat::analysis {

using namespace inference_detail;  // NOLINT(google-build-using-namespace): the units of one class

Estimate::Interval Inference::intervalOf(const Node& root, const std::vector<AddedCost>& costs,
                                         const std::vector<Node>& fn_nodes, int unknown_new) const {
  const Distribution& m = root.estimate.dist;
  double rel = 0;
  if (root.measured)
    rel = relativeError(root.measured->mean_ns, root.measured->p50_ns, root.measured->p90_ns,
                        root.measured->count, options_.interval_z);
  Distribution lo = scaleDist(m, 1 - rel), hi = scaleDist(m, 1 + rel);
  for (const AddedCost& a : costs) {
    if (a.status == AddedCost::Status::New) {
      lo = addDist(lo, a.total_lo);
      hi = addDist(hi, a.total_hi);
    } else if (a.status == AddedCost::Status::Removed) {
      lo = subtractDist(lo, a.total_hi);
      hi = subtractDist(hi, a.total_lo);
    }
  }
  // The changed code is measured in another run than the one the prediction rests on: its value
  // moves with that run's conditions as a whole (load, data), so the drift scales the result.
  const double drift = driftShare(root, options_);
  hi = scaleDist(hi, 1 + drift);
  // A part without data (a new call nothing is known about, or one whose own estimate leaves
  // parts out) has no top: the range is open above rather than claiming one.
  bool open_above = unknown_new > 0;
  for (const AddedCost& a : costs)
    if (a.status == AddedCost::Status::New && a.node >= 0 &&
        static_cast<size_t>(a.node) < fn_nodes.size() &&
        fn_nodes[a.node].estimate.unknown_parts > 0)
      open_above = true;
  if (open_above) {
    constexpr double kInf = std::numeric_limits<double>::infinity();
    hi.mean_ns = hi.p50_ns = hi.p90_ns = hi.p99_ns = kInf;
  }
  return {scaleDist(lo, 1 - drift), hi};
}

const Node* Inference::nextAccessAfterRemoval(const FunctionInfo& fn,
                                              const std::vector<std::string>& now_path,
                                              const std::vector<bool>& stays,
                                              const FunctionInfo& old,
                                              const std::vector<std::string>& old_path,
                                              const Node& removed) {
  // A member call on a local object, of a callee with two outcomes, costed at the loading one.
  if (removed.call.receiver_var.empty() || removed.call.local_names.empty() || !removed.measured)
    return nullptr;
  const std::optional<double> loaded =
      loadedOutcome(*removed.measured, options_.context_bimodal_ratio);
  if (!loaded || !(*loaded < removed.estimate.dist.mean_ns)) return nullptr;
  const std::string& object = removed.call.local_names.front();
  const std::string scope = old_path[loopScope(old, removed, false)];
  for (const Node& m : fn.nodes) {
    if (m.kind != NodeKind::Call || !stays[m.id]) continue;
    if (now_path[loopScope(fn, m, false)] != scope) continue;
    if (std::find(m.call.local_names.begin(), m.call.local_names.end(), object) ==
        m.call.local_names.end())
      continue;
    // The same callee on the same object, or a callee given the object whose body reads the
    // value (a call of the removed callee with both outcomes in production).
    if (m.call.key == removed.call.key && !m.call.receiver_var.empty() &&
        m.call.local_names.front() == object)
      return &m;
    if (m.call.in_workspace && !m.call.key.empty()) {
      const CalleeContext& c = contextOf(m.call.key);
      if (std::find(c.inner_keys.begin(), c.inner_keys.end(), removed.call.key) !=
          c.inner_keys.end())
        return &m;
    }
  }
  return nullptr;
}

void Inference::diffAgainstDeployed(FunctionInfo& fn, const FunctionInfo& deployed) {
  // The deployed body with production data attached: what each of its calls cost there.
  analysing_deployed_ = true;
  FunctionInfo old = analyzeFunction(deployed);
  analysing_deployed_ = false;
  in_progress_.insert(fn.key);  // the nested analysis of the same key released it

  const std::vector<std::string> now_path = nodePaths(fn, old), old_path = nodePaths(old, fn);
  std::unordered_map<std::string, std::vector<int>> old_calls;
  for (const Node& o : old.nodes)
    if (o.kind == NodeKind::Call) old_calls[old_path[o.id]].push_back(o.id);
  std::unordered_map<std::string, size_t> paired;
  std::vector<bool> kept(old.nodes.size(), false);
  int unknown_new = 0;
  for (const Node& n : fn.nodes) {
    if (n.kind != NodeKind::Call) continue;
    const std::vector<int>& same = old_calls[now_path[n.id]];
    size_t& used = paired[now_path[n.id]];
    if (used < same.size()) {
      kept[same[used++]] = true;
      continue;
    }
    if (!n.estimate.known()) {
      // The standard library's calls without data (operator->, insert) are the code's own CPU
      // work, as for every measured function: not an unknown part.
      if (!isLeaf(n.estimate) && !n.call.system) ++unknown_new;
      continue;
    }
    if (n.estimate.dist.mean_ns <= 0) continue;
    AddedCost a = addedCost(n.estimate, executionFactors(fn, n));
    a.node = n.id;
    fn.added.push_back(std::move(a));
  }
  // The calls of the text as written that stand where production ran them.
  std::vector<bool> stays(fn.nodes.size(), false);
  {
    std::unordered_map<std::string, size_t> taken;
    for (const Node& n : fn.nodes)
      if (n.kind == NodeKind::Call)
        stays[n.id] = taken[now_path[n.id]]++ < old_calls[now_path[n.id]].size();
  }
  std::vector<fact::Assumption> moved_loads;
  for (const Node& o : old.nodes) {
    if (o.kind != NodeKind::Call || kept[o.id]) continue;
    if (!o.estimate.known() || o.estimate.dist.mean_ns <= 0) continue;
    Estimate per = o.estimate;
    if (const Node* next = nextAccessAfterRemoval(fn, now_path, stays, old, old_path, o)) {
      const double loaded = *loadedOutcome(*o.measured, options_.context_bimodal_ratio);
      moved_loads.push_back(fact::LoadMovesOn{callName(o), o.call.local_names.front(),
                                              callName(*next), loaded, per.dist.mean_ns});
      per.dist.mean_ns = per.dist.p50_ns = per.dist.p90_ns = per.dist.p99_ns = loaded;
      per.floor_mean_ns = loaded;
      per.spread_lo = per.spread_hi = 1;
    }
    // Production counted this very call: its count per call of the function is what goes away.
    std::vector<CostFactor> factors;
    if (o.call.production_calls > 0)
      factors = {{CostFactor::Kind::ProductionCalls, o.call.production_calls, -1, false,
                  o.call.production_calls, o.call.production_calls}};
    else
      factors = executionFactors(old, o);
    for (CostFactor& f : factors) f.from = -1;  // nodes of the deployed text
    AddedCost a = addedCost(per, std::move(factors));
    a.status = AddedCost::Status::Removed;
    a.removed_name = callName(o);
    a.removed_line = o.range.start.line;
    fn.added.push_back(std::move(a));
  }
  if (fn.added.empty() && unknown_new == 0) return;

  Node& root = fn.nodes[0];
  Distribution added, removed;
  std::vector<fact::ChangedCall> inputs;
  for (const AddedCost& a : fn.added) {
    if (a.status == AddedCost::Status::Removed) {
      removed = addDist(removed, a.total);
      inputs.push_back(
          {fact::CallChange::Removed, a.removed_name, factorValues(a), a.per_execution.mean_ns});
    } else {
      added = addDist(added, a.total);
      inputs.push_back({fact::CallChange::New, callName(fn.nodes[a.node]), factorValues(a),
                        a.per_execution.mean_ns});
    }
  }
  fn.changed = true;
  Estimate e;
  e.provenance = Provenance::Inferred;
  const Distribution& m = root.estimate.dist;
  e.dist = subtractDist(addDist(m, added), removed);
  e.dist.samples = m.samples;
  e.interval = intervalOf(root, fn.added, fn.nodes, unknown_new);
  e.floor_mean_ns = e.dist.mean_ns;
  e.unknown_parts = unknown_new;
  e.derivation.model = Model::Diff;
  e.derivation.summary = fact::MeasuredDiff{m.mean_ns, removed.mean_ns, added.mean_ns};
  e.derivation.inputs.push_back({{}, fact::MeasuredTotal{m.mean_ns}});
  for (auto& i : inputs) e.derivation.inputs.push_back({{}, std::move(i)});
  e.derivation.assumptions = root.estimate.derivation.assumptions;
  e.derivation.assumptions.push_back(fact::ComparedWithDeployed{deployed_revision_});
  for (auto& m : moved_loads) e.derivation.assumptions.push_back(std::move(m));
  if (m.mean_ns + added.mean_ns < removed.mean_ns)
    e.derivation.assumptions.push_back(fact::ClampedAtZero{});
  if (unknown_new > 0) e.derivation.assumptions.push_back(fact::UnknownNewCalls{unknown_new});
  root.estimate = e;
}

}  // namespace perfhat::analysis
