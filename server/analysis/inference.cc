#include "server/analysis/inference.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <deque>
#include <vector>

#include "common/function_key.h"
#include "server/analysis/inference_parts.h"

namespace perfhat::analysis {

Distribution addDist(const Distribution& a, const Distribution& b) {
  Distribution d;
  d.mean_ns = a.mean_ns + b.mean_ns;
  d.p50_ns = a.p50_ns + b.p50_ns;
  d.p90_ns = a.p90_ns + b.p90_ns;
  d.p99_ns = a.p99_ns + b.p99_ns;
  d.samples = a.samples == 0   ? b.samples
              : b.samples == 0 ? a.samples
                               : std::min(a.samples, b.samples);
  return d;
}

Distribution scaleDist(const Distribution& a, double k) {
  Distribution d = a;
  d.mean_ns *= k;
  d.p50_ns *= k;
  d.p90_ns *= k;
  d.p99_ns *= k;
  return d;
}

Distribution fromStats(const Stats& s) {
  return Distribution{s.mean_ns, s.p50_ns, s.p90_ns, s.p99_ns, s.count};
}

using namespace inference_detail;  // NOLINT(google-build-using-namespace): the units of one class

Inference::Inference(const ParsedUnit& unit, const FeedbackView& view,
                     const AnalysisOptions& options, const ParsedUnit* deployed,
                     std::string deployed_revision)
    : options_(options),
      matcher_(view, options),
      deployed_revision_(std::move(deployed_revision)),
      has_deployed_(deployed != nullptr) {
  for (const auto& [key, f] : unit.workspace_bodies) bodies_.emplace(key, &f);
  for (const auto& f : unit.functions) bodies_[f.key] = &f;  // the document's own bodies win
  if (deployed)
    for (const auto& f : deployed->functions) deployed_.emplace(f.key, &f);
}

const FunctionInfo* Inference::findBody(const std::string& key) const {
  auto it = bodies_.find(key);
  return it == bodies_.end() ? nullptr : it->second;
}

FunctionInfo Inference::analyzeFunction(const FunctionInfo& input) {
  in_progress_.insert(input.key);
  FunctionInfo fn = input;
  MatchResult self = matcher_.matchDefinition(fn);
  Node& root = fn.nodes[0];
  fn.match = self ? self.how : MatchKind::None;
  for (const FeedbackItem* part : self.parts) fn.matched.push_back({part->key, part->stats});
  if (self) attach(root, *self.item);
  bool function_measured = self && self.item->stats.has_value();
  if (function_measured) {
    root.estimate.provenance = Provenance::Measured;
    root.estimate.dist = fromStats(*self.item->stats);
    root.estimate.floor_mean_ns = root.estimate.dist.mean_ns;
    root.estimate.derivation.model = Model::Measured;
    root.estimate.derivation.summary = fact::Production{root.estimate.dist.mean_ns};
    if (self.how == MatchKind::Overloads)
      root.estimate.derivation.assumptions.push_back(fact::Aggregated{qualifiedName(fn.key), true});
  }

  // Against a deployed body that differs: which calls stand where production ran them.
  std::vector<bool> at_deployed_place(fn.nodes.size(), true);
  if (has_deployed_ && !analysing_deployed_)
    if (auto d = deployed_.find(fn.key);
        d != deployed_.end() && d->second->body_hash != fn.body_hash)
      at_deployed_place = callsAtDeployedPlace(fn, *d->second);

  // Outside-in (BFS): attach data; what has none goes on the stack.
  std::vector<MatchResult> callee(fn.nodes.size());
  std::unordered_map<std::string, const CallSiteStats*> measured_site;  // by callee key
  std::unordered_map<std::string, int> calls_of;
  // A call inside an algorithm's lambda is the lambda's in production's records (a site from
  // this function is another call's): it is not among this function's counted calls.
  for (const Node& n : fn.nodes)
    if (n.kind == NodeKind::Call && !n.via_lambda) ++calls_of[n.callee_key];
  std::vector<bool> has_site(fn.nodes.size(), false);  // calls with a site from this caller
  std::vector<int> to_infer;
  std::deque<int> queue{0};
  while (!queue.empty()) {
    int id = queue.front();
    queue.pop_front();
    Node& n = fn.nodes[id];
    for (int c : n.children) queue.push_back(c);
    switch (n.kind) {
      case NodeKind::Function:
        if (!function_measured) to_infer.push_back(id);
        break;
      case NodeKind::Call: {
        callee[id] = matcher_.match(n.callee_key, n.callee_mangled);
        if (n.callee_virtual)
          if (MatchResult v = matcher_.matchVirtual(fn.key, n.callee_key)) {
            for (const FeedbackItem* impl : v.parts)
              n.implementations.push_back({impl->key, impl->stats});
            callee[id] = std::move(v);
          }
        if (n.callee_indirect)
          if (MatchResult v = matcher_.matchIndirect(fn, n)) {
            for (const FeedbackItem* impl : v.parts)
              n.implementations.push_back({impl->key, impl->stats});
            callee[id] = std::move(v);
          }
        const FeedbackItem* item = callee[id].item;
        if (item) attach(n, *item);
        const CallSiteStats* site = item ? callSiteFrom(*item, fn, caller_cache_) : nullptr;
        if (site) {
          has_site[id] = true;
          n.estimate.provenance = Provenance::Measured;
          n.estimate.dist = fromCallSite(*site);
          n.estimate.floor_mean_ns = n.estimate.dist.mean_ns;
          setSpread(n.estimate, relativeError(site->mean_ns, site->p50_ns, site->p90_ns,
                                              site->count, options_.interval_z));
          n.estimate.derivation.model = Model::Measured;
          n.estimate.derivation.summary = fact::ProductionCallSite{fn.name, displayName(n)};
          // Only data of this very callee counts its calls: a site matched across overloads
          // (`operator<<` for another argument type) counts the other overloads' calls. A call
          // moved to a new place (behind a new `continue` guard) is not counted where it was.
          if (function_measured && !n.via_lambda && calls_of[n.callee_key] == 1 &&
              callee[id].how != MatchKind::Overloads && at_deployed_place[id])
            n.production_calls = site->calls_per_parent;
          if (!n.callee_indirect) measured_site[n.callee_key] = site;
          // Sites are keyed by caller, not by position: a second call on the same object takes
          // the site's figure, which its first call (the one that loads) made. It finds the
          // value loaded like a call without a site of its own.
          takeRepeatedCallFast(n, fn, callee[id], n.estimate);
        } else if (item && item->stats && item->callsites.empty()) {
          // The data does not record call sites, so this call cannot be told apart from an
          // existing one: the callee's own distribution is its measurement.
          n.estimate.provenance = Provenance::Measured;
          n.estimate.dist = fromStats(*item->stats);
          n.estimate.floor_mean_ns = n.estimate.dist.mean_ns;
          setSpread(n.estimate,
                    relativeError(item->stats->mean_ns, item->stats->p50_ns, item->stats->p90_ns,
                                  item->stats->count, options_.interval_z));
          n.estimate.derivation.model = Model::Measured;
          n.estimate.derivation.summary =
              fact::ProductionCallee{displayName(n), item->stats->mean_ns};
        } else {
          to_infer.push_back(id);
        }
        if (n.estimate.known() && callee[id].how == MatchKind::Overloads)
          n.estimate.derivation.assumptions.push_back(
              fact::Aggregated{qualifiedName(n.callee_key), false});
        break;
      }
      case NodeKind::Loop:
      case NodeKind::Branch:
        to_infer.push_back(id);
        break;
    }
  }
  // Production call counts per parent, for calls whose callee is called from one place only here
  // (the call site is keyed by caller, not by position): only they are known now.
  // Iteration counts in source order (node ids are pre-order): a loop over a local container
  // needs the counts of the loops that fill it, which come before it.
  for (Node& n : fn.nodes)
    if (n.kind == NodeKind::Loop) assignIterations(n, fn, self);
  // Inside-out: pop the stack; what is inferred is in place for the nodes above (context).
  while (!to_infer.empty()) {
    int id = to_infer.back();
    to_infer.pop_back();
    Node& n = fn.nodes[id];
    switch (n.kind) {
      case NodeKind::Call:
        n.estimate = inferCall(n, fn, callee[id]);
        if (!takeRepeatedCallFast(n, fn, callee[id], n.estimate))
          addCalleeContext(n, fn, n.estimate);
        break;
      case NodeKind::Loop:
        n.estimate = inferLoop(n, fn);
        break;
      case NodeKind::Branch:
        n.estimate = inferBranch(n, fn);
        break;
      case NodeKind::Function: {
        Sum s;
        for (int c : n.children) s.add(fn.nodes[c]);
        Estimate e;
        e.derivation.model = Model::Sum;
        s.noteUnknown(e.derivation);
        if (fn.unresolved_calls == 0 && (n.children.empty() || s.onlyNegligible())) {
          // A body with no calls, loops or branches (an accessor, arithmetic), or calling only
          // such bodies, does only CPU work on data it already has: negligible next to the
          // calls production measures. It stays without a figure ("no data", never "0 ns"),
          // and callers take it as negligible, stated in their hovers.
          e = negligibleEstimate(NodeKind::Function, fn.name);
        } else if (s.any_known) {
          e.provenance = Provenance::Inferred;
          e.dist = s.dist;
          e.floor_mean_ns = s.floor;
          e.unknown_parts = s.unknown_parts;
          e.derivation.summary = fact::PartsSum{s.inputs.size(), s.dist.mean_ns};
          e.derivation.inputs = s.inputs;
          e.derivation.assumptions.push_back(fact::SumOfParts{fn.name});
        } else {
          e.derivation.summary = fact::NothingKnown{};
        }
        n.estimate = e;
        break;
      }
    }
  }
  // What production ran is known: the deployed body decides what is new and what is gone.
  if (has_deployed_ && !analysing_deployed_) {
    auto d = deployed_.find(fn.key);
    if (d == deployed_.end()) {
      fn.deployed = DeployedBody::Absent;
    } else {
      fn.deployed_revision = deployed_revision_;
      fn.deployed =
          d->second->body_hash == fn.body_hash ? DeployedBody::Identical : DeployedBody::Changed;
    }
    if (function_measured && fn.deployed != DeployedBody::Absent) {
      if (fn.deployed == DeployedBody::Changed) diffAgainstDeployed(fn, *d->second);
      in_progress_.erase(input.key);
      return fn;
    }
  }
  // Calls without call-site data. Without a function measurement there is nothing to compare:
  // the function is a prediction for the code as written.
  if (!function_measured) {
    for (const Node& n : fn.nodes)
      if (n.kind == NodeKind::Call && n.estimate.provenance == Provenance::Inferred &&
          n.estimate.dist.mean_ns > 0)
        fn.changed = true;
    in_progress_.erase(input.key);
    return fn;
  }
  // With a measurement, nothing says which code production ran (DESIGN §10, "What production
  // ran": no deployed revision or body hashes here), so a call without call-site data may be new
  // or may be an existing call production did not attribute to this caller (inlined, sampled
  // out, spelled differently). It counts as new only when the function's measured time leaves
  // no room for it: its cost resting on data and stated branch priors (assumed loop counts
  // count 0) exceeds the measured mean less what the measured calls account for. Otherwise it
  // is "possibly new": shown, not added to the prediction.
  double explained = 0;
  for (const Node& n : fn.nodes)
    if (n.kind == NodeKind::Call && n.estimate.provenance == Provenance::Measured &&
        n.production_calls > 0)
      explained += n.estimate.dist.mean_ns * n.production_calls;
  const double room = std::max(0.0, root.estimate.dist.mean_ns - explained);
  for (const Node& n : fn.nodes) {
    if (n.kind != NodeKind::Call || n.estimate.provenance != Provenance::Inferred) continue;
    if (n.estimate.dist.mean_ns <= 0) continue;  // predicted to cost nothing: changes nothing
    // A call production measured from here (a repeated call costed at its loaded outcome) is
    // not new: the check of calls beyond production's count below covers it.
    if (has_site[n.id]) continue;
    // Production measured it within the lambda, whose time this function's measurement holds.
    if (n.via_lambda) continue;
    AddedCost a = addedCost(n.estimate, executionFactors(fn, n));
    a.node = n.id;
    a.room_ns = room;
    a.status = a.floor_ns > room ? AddedCost::Status::New : AddedCost::Status::PossiblyNew;
    fn.added.push_back(std::move(a));
  }
  // A callee called from several places here has one call site in the data (it is keyed by
  // caller): production saw `calls_per_parent` calls per call of this function. When the code as
  // written makes clearly more (a call added in a loop beside an existing one), the excess is new
  // cost, even though every node of that callee matched measured data. Counted with data-backed
  // factors only, the excess is a contradiction of production's count (new); with assumed ones
  // only, it is possibly new.
  for (const auto& [key, site] : measured_site) {
    if (calls_of[key] < 2 || site->calls_per_parent <= 0) continue;
    double expected = 0, expected_data = 0;
    const Node* any = nullptr;
    for (const Node& n : fn.nodes) {
      if (n.kind != NodeKind::Call || n.callee_key != key) continue;
      if (n.via_lambda) continue;  // counted under the lambda's site
      const std::vector<CostFactor> f = executionFactors(fn, n);
      expected += product(f, false);
      expected_data += product(f, true);
      any = &n;
    }
    // Beyond counting noise: half again as many, and at least one more every other call.
    // (A copy, not the binding: clang 14 does not capture structured bindings.)
    const double production_calls = site->calls_per_parent;
    auto beyond = [production_calls](double count) {
      return count >= 1.5 * production_calls && count - production_calls >= 0.5;
    };
    if (!any || !beyond(expected)) continue;
    const double extra = expected - site->calls_per_parent;
    AddedCost a;
    a.node = any->id;
    a.per_execution = any->estimate.dist;
    a.factors = {{CostFactor::Kind::ExtraCalls, extra, -1, !beyond(expected_data), extra, extra}};
    a.executions = extra;
    a.total = scaleDist(a.per_execution, extra);
    setRange(a, any->estimate);
    a.floor_ns = beyond(expected_data)
                     ? any->estimate.floor_mean_ns * (expected_data - site->calls_per_parent)
                     : 0;
    a.room_ns = room;
    a.status = beyond(expected_data) ? AddedCost::Status::New : AddedCost::Status::PossiblyNew;
    fn.added.push_back(std::move(a));
  }
  Distribution added;
  bool any_new = false;
  std::vector<fact::ChangedCall> new_inputs;
  std::vector<fact::NotCounted> possibly_new;
  for (const AddedCost& a : fn.added) {
    const bool extra = a.factors.size() == 1 && a.factors[0].kind == CostFactor::Kind::ExtraCalls;
    fact::ChangedCall call{extra ? fact::CallChange::MoreCalls : fact::CallChange::New,
                           displayName(fn.nodes[a.node]), factorValues(a), a.per_execution.mean_ns};
    if (a.status == AddedCost::Status::PossiblyNew) {
      possibly_new.push_back({std::move(call), true, a.floor_ns, a.room_ns});
      continue;
    }
    added = any_new ? addDist(added, a.total) : a.total;
    any_new = true;
    new_inputs.push_back(std::move(call));
  }
  if (any_new) {
    fn.changed = true;
    Estimate e;
    e.provenance = Provenance::Inferred;
    e.dist = addDist(root.estimate.dist, added);
    e.dist.samples = root.estimate.dist.samples;
    e.interval = intervalOf(root, fn.added, fn.nodes, 0);
    e.floor_mean_ns = root.estimate.dist.mean_ns;
    e.derivation.model = Model::Sum;
    e.derivation.summary = fact::MeasuredPlusNew{root.estimate.dist.mean_ns, added.mean_ns};
    e.derivation.inputs.push_back({{}, fact::MeasuredTotal{root.estimate.dist.mean_ns}});
    for (auto& i : new_inputs) e.derivation.inputs.push_back({{}, std::move(i)});
    e.derivation.assumptions = root.estimate.derivation.assumptions;
    e.derivation.assumptions.push_back(fact::NewCallsAdd{});
    for (auto& i : possibly_new) e.derivation.assumptions.push_back(std::move(i));
    root.estimate = e;
  } else {
    for (auto& i : possibly_new) root.estimate.derivation.assumptions.push_back(std::move(i));
  }
  in_progress_.erase(input.key);
  return fn;
}

}  // namespace perfhat::analysis
