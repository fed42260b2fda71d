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

namespace {

// The function's own production data: its measurement becomes the root's estimate. Returns
// whether the function is measured.
bool attachOwnMeasurement(FunctionInfo& fn, const MatchResult& self) {
  Node& root = fn.nodes[0];
  fn.match = self ? self.how : MatchKind::None;
  for (const FeedbackItem* part : self.parts) fn.matched.push_back({part->key, part->stats});
  if (self) attach(root, *self.item);
  if (!(self && self.item->stats.has_value())) return false;
  root.estimate.provenance = Provenance::Measured;
  root.estimate.dist = fromStats(*self.item->stats);
  root.estimate.floor_mean_ns = root.estimate.dist.mean_ns;
  root.estimate.derivation.model = Model::Measured;
  root.estimate.derivation.summary = fact::Production{root.estimate.dist.mean_ns};
  if (self.how == MatchKind::Overloads)
    root.estimate.derivation.assumptions.push_back(fact::Aggregated{qualifiedName(fn.key), true});
  return true;
}

// A call measured at its call site from this function.
void measureAtSite(Node& n, const FunctionInfo& fn, const CallSiteStats& site, double z) {
  n.estimate.provenance = Provenance::Measured;
  n.estimate.dist = fromCallSite(site);
  n.estimate.floor_mean_ns = n.estimate.dist.mean_ns;
  setSpread(n.estimate, relativeError(site.mean_ns, site.p50_ns, site.p90_ns, site.count, z));
  n.estimate.derivation.model = Model::Measured;
  n.estimate.derivation.summary = fact::ProductionCallSite{fn.name, callName(n)};
}

// A call of a callee whose data records no call sites: the callee's own distribution.
void measureAsCallee(Node& n, const Stats& stats, double z) {
  n.estimate.provenance = Provenance::Measured;
  n.estimate.dist = fromStats(stats);
  n.estimate.floor_mean_ns = n.estimate.dist.mean_ns;
  setSpread(n.estimate, relativeError(stats.mean_ns, stats.p50_ns, stats.p90_ns, stats.count, z));
  n.estimate.derivation.model = Model::Measured;
  n.estimate.derivation.summary = fact::ProductionCallee{callName(n), stats.mean_ns};
}

// An unmeasured function's total: the sum of its children, negligible when they all are.
Estimate sumOfChildren(const FunctionInfo& fn, const Node& n) {
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
  return e;
}

// Without a function measurement there is nothing to compare: the function is a prediction for
// the code as written, changed when an inferred call costs something.
void markInferredCallsChanged(FunctionInfo& fn) {
  for (const Node& n : fn.nodes)
    if (n.kind == NodeKind::Call && n.estimate.provenance == Provenance::Inferred &&
        n.estimate.dist.mean_ns > 0)
      fn.changed = true;
}

// The measured time the measured calls do not account for: what a new call must exceed to
// contradict the measurement.
double roomForNewCalls(const FunctionInfo& fn) {
  double explained = 0;
  for (const Node& n : fn.nodes)
    if (n.kind == NodeKind::Call && n.estimate.provenance == Provenance::Measured &&
        n.call.production_calls > 0)
      explained += n.estimate.dist.mean_ns * n.call.production_calls;
  return std::max(0.0, fn.nodes[0].estimate.dist.mean_ns - explained);
}

}  // namespace

// One function's analysis (Algorithm 1 on one body) and the state its passes share, by node id.
class Inference::FunctionPass {
 public:
  FunctionPass(Inference& in, FunctionInfo& fn)
      : in_(in),
        fn_(fn),
        at_deployed_place_(fn.nodes.size(), true),
        callee_(fn.nodes.size()),
        has_site_(fn.nodes.size(), false) {}

  void run() {
    self_ = in_.matcher_.matchDefinition(fn_);
    function_measured_ = attachOwnMeasurement(fn_, self_);
    findCallsAtDeployedPlace();
    visitOutsideIn();
    // Iteration counts in source order (node ids are pre-order): a loop over a local container
    // needs the counts of the loops that fill it, which come before it.
    for (Node& n : fn_.nodes)
      if (n.kind == NodeKind::Loop) in_.assignIterations(n, fn_, self_);
    inferInsideOut();
    if (settledByDeployedBody()) return;
    if (!function_measured_) {
      markInferredCallsChanged(fn_);
      return;
    }
    // With a measurement, nothing says which code production ran (DESIGN §10, "What production
    // ran": no deployed revision or body hashes here), so a call without call-site data may be
    // new or may be an existing call production did not attribute to this caller (inlined,
    // sampled out, spelled differently). It counts as new only when the function's measured
    // time leaves no room for it: its cost resting on data and stated branch priors (assumed
    // loop counts count 0) exceeds the measured mean less what the measured calls account for.
    // Otherwise it is "possibly new": shown, not added to the prediction.
    const double room = roomForNewCalls(fn_);
    addCallsWithoutSite(room);
    addCallsBeyondProductionCount(room);
    addNewCostsToMeasurement();
  }

 private:
  // Against a deployed body that differs: which calls stand where production ran them.
  void findCallsAtDeployedPlace() {
    if (in_.has_deployed_ && !in_.analysing_deployed_)
      if (auto d = in_.deployed_.find(fn_.key);
          d != in_.deployed_.end() && d->second->body_hash != fn_.body_hash)
        at_deployed_place_ = callsAtDeployedPlace(fn_, *d->second);
  }

  // Outside-in (BFS): attach data; what has none goes on the stack.
  void visitOutsideIn() {
    // A call inside an algorithm's lambda is the lambda's in production's records (a site from
    // this function is another call's): it is not among this function's counted calls.
    for (const Node& n : fn_.nodes)
      if (n.kind == NodeKind::Call && !n.call.via_lambda) ++calls_of_[n.call.key];
    std::deque<int> queue{0};
    while (!queue.empty()) {
      int id = queue.front();
      queue.pop_front();
      Node& n = fn_.nodes[id];
      for (int c : n.children) queue.push_back(c);
      switch (n.kind) {
        case NodeKind::Function:
          if (!function_measured_) to_infer_.push_back(id);
          break;
        case NodeKind::Call:
          visitCall(id, n);
          break;
        case NodeKind::Loop:
        case NodeKind::Branch:
          to_infer_.push_back(id);
          break;
      }
    }
  }

  // The callee's data: by key, or the implementations a virtual or indirect call ran.
  MatchResult matchCallee(Node& n) const {
    MatchResult m = in_.matcher_.match(n.call.key, n.call.mangled);
    auto adopt = [&](MatchResult v) {
      for (const FeedbackItem* impl : v.parts)
        n.call.implementations.push_back({impl->key, impl->stats});
      m = std::move(v);
    };
    if (n.call.is_virtual)
      if (MatchResult v = in_.matcher_.matchVirtual(fn_.key, n.call.key)) adopt(std::move(v));
    if (n.call.indirect)
      if (MatchResult v = in_.matcher_.matchIndirect(fn_, n)) adopt(std::move(v));
    return m;
  }

  // A call: measured at its call site from here, measured as its callee when the data records
  // no call sites, else on the stack.
  void visitCall(int id, Node& n) {
    callee_[id] = matchCallee(n);
    const FeedbackItem* item = callee_[id].item;
    if (item) attach(n, *item);
    const CallSiteStats* site = item ? callSiteFrom(*item, fn_, in_.caller_cache_) : nullptr;
    if (site) {
      has_site_[id] = true;
      measureAtSite(n, fn_, *site, in_.options_.interval_z);
      // Only data of this very callee counts its calls: a site matched across overloads
      // (`operator<<` for another argument type) counts the other overloads' calls. A call
      // moved to a new place (behind a new `continue` guard) is not counted where it was.
      if (function_measured_ && !n.call.via_lambda && calls_of_[n.call.key] == 1 &&
          callee_[id].how != MatchKind::Overloads && at_deployed_place_[id])
        n.call.production_calls = site->calls_per_parent;
      if (!n.call.indirect) measured_site_[n.call.key] = site;
      // Sites are keyed by caller, not by position: a second call on the same object takes
      // the site's figure, which its first call (the one that loads) made. It finds the
      // value loaded like a call without a site of its own.
      in_.takeRepeatedCallFast(n, fn_, callee_[id], n.estimate);
    } else if (item && item->stats && item->callsites.empty()) {
      // The data does not record call sites, so this call cannot be told apart from an
      // existing one: the callee's own distribution is its measurement.
      measureAsCallee(n, *item->stats, in_.options_.interval_z);
    } else {
      to_infer_.push_back(id);
    }
    if (n.estimate.known() && callee_[id].how == MatchKind::Overloads)
      n.estimate.derivation.assumptions.push_back(
          fact::Aggregated{qualifiedName(n.call.key), false});
  }

  // Inside-out: pop the stack; what is inferred is in place for the nodes above (context).
  void inferInsideOut() {
    while (!to_infer_.empty()) {
      int id = to_infer_.back();
      to_infer_.pop_back();
      Node& n = fn_.nodes[id];
      switch (n.kind) {
        case NodeKind::Call:
          n.estimate = in_.inferCall(n, fn_, callee_[id]);
          if (!in_.takeRepeatedCallFast(n, fn_, callee_[id], n.estimate))
            in_.addCalleeContext(n, fn_, n.estimate);
          break;
        case NodeKind::Loop:
          n.estimate = in_.inferLoop(n, fn_);
          break;
        case NodeKind::Branch:
          n.estimate = in_.inferBranch(n, fn_);
          break;
        case NodeKind::Function:
          n.estimate = sumOfChildren(fn_, n);
          break;
      }
    }
  }

  // What production ran is known: the deployed body decides what is new and what is gone.
  // Returns whether that settles the function (measured, and deployed).
  bool settledByDeployedBody() {
    if (!in_.has_deployed_ || in_.analysing_deployed_) return false;
    auto d = in_.deployed_.find(fn_.key);
    if (d == in_.deployed_.end()) {
      fn_.deployed = DeployedBody::Absent;
    } else {
      fn_.deployed_revision = in_.deployed_revision_;
      fn_.deployed =
          d->second->body_hash == fn_.body_hash ? DeployedBody::Identical : DeployedBody::Changed;
    }
    if (!function_measured_ || fn_.deployed == DeployedBody::Absent) return false;
    if (fn_.deployed == DeployedBody::Changed) in_.diffAgainstDeployed(fn_, *d->second);
    return true;
  }

  // Calls without call-site data of their own, each new or possibly new.
  void addCallsWithoutSite(double room) {
    for (const Node& n : fn_.nodes) {
      if (n.kind != NodeKind::Call || n.estimate.provenance != Provenance::Inferred) continue;
      if (n.estimate.dist.mean_ns <= 0) continue;  // predicted to cost nothing: changes nothing
      // A call production measured from here (a repeated call costed at its loaded outcome) is
      // not new: the check of calls beyond production's count below covers it.
      if (has_site_[n.id]) continue;
      // Production measured it within the lambda, whose time this function's measurement holds.
      if (n.call.via_lambda) continue;
      AddedCost a = addedCost(n.estimate, in_.executionFactors(fn_, n));
      a.node = n.id;
      a.room_ns = room;
      a.status = a.floor_ns > room ? AddedCost::Status::New : AddedCost::Status::PossiblyNew;
      fn_.added.push_back(std::move(a));
    }
  }

  // A callee called from several places here has one call site in the data (it is keyed by
  // caller): production saw `calls_per_parent` calls per call of this function. When the code as
  // written makes clearly more (a call added in a loop beside an existing one), the excess is
  // new cost, even though every node of that callee matched measured data. Counted with
  // data-backed factors only, the excess is a contradiction of production's count (new); with
  // assumed ones only, it is possibly new.
  void addCallsBeyondProductionCount(double room) {
    for (const auto& [key, site] : measured_site_) {
      if (calls_of_[key] < 2 || site->calls_per_parent <= 0) continue;
      double expected = 0, expected_data = 0;
      const Node* any = nullptr;
      for (const Node& n : fn_.nodes) {
        if (n.kind != NodeKind::Call || n.call.key != key) continue;
        if (n.call.via_lambda) continue;  // counted under the lambda's site
        const std::vector<CostFactor> f = in_.executionFactors(fn_, n);
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
      fn_.added.push_back(std::move(a));
    }
  }

  // The new costs that contradict the measurement add to it; the possibly new ones are stated.
  void addNewCostsToMeasurement() {
    Node& root = fn_.nodes[0];
    Distribution added;
    bool any_new = false;
    std::vector<fact::ChangedCall> new_inputs;
    std::vector<fact::NotCounted> possibly_new;
    for (const AddedCost& a : fn_.added) {
      const bool extra = a.factors.size() == 1 && a.factors[0].kind == CostFactor::Kind::ExtraCalls;
      fact::ChangedCall call{extra ? fact::CallChange::MoreCalls : fact::CallChange::New,
                             callName(fn_.nodes[a.node]), factorValues(a), a.per_execution.mean_ns};
      if (a.status == AddedCost::Status::PossiblyNew) {
        possibly_new.push_back({std::move(call), true, a.floor_ns, a.room_ns});
        continue;
      }
      added = any_new ? addDist(added, a.total) : a.total;
      any_new = true;
      new_inputs.push_back(std::move(call));
    }
    if (!any_new) {
      for (auto& i : possibly_new) root.estimate.derivation.assumptions.push_back(std::move(i));
      return;
    }
    fn_.changed = true;
    Estimate e;
    e.provenance = Provenance::Inferred;
    e.dist = addDist(root.estimate.dist, added);
    e.dist.samples = root.estimate.dist.samples;
    e.interval = in_.intervalOf(root, fn_.added, fn_.nodes, 0);
    e.floor_mean_ns = root.estimate.dist.mean_ns;
    e.derivation.model = Model::Sum;
    e.derivation.summary = fact::MeasuredPlusNew{root.estimate.dist.mean_ns, added.mean_ns};
    e.derivation.inputs.push_back({{}, fact::MeasuredTotal{root.estimate.dist.mean_ns}});
    for (auto& i : new_inputs) e.derivation.inputs.push_back({{}, std::move(i)});
    e.derivation.assumptions = root.estimate.derivation.assumptions;
    e.derivation.assumptions.push_back(fact::NewCallsAdd{});
    for (auto& i : possibly_new) e.derivation.assumptions.push_back(std::move(i));
    root.estimate = e;
  }

  Inference& in_;
  FunctionInfo& fn_;
  MatchResult self_;
  bool function_measured_ = false;
  std::vector<bool> at_deployed_place_;
  std::vector<MatchResult> callee_;
  std::unordered_map<std::string, const CallSiteStats*> measured_site_;  // by callee key
  std::unordered_map<std::string, int> calls_of_;  // this function's counted calls, by callee
  std::vector<bool> has_site_;                     // calls with a site from this caller
  std::vector<int> to_infer_;                      // the stack of nodes without data
};

FunctionInfo Inference::analyzeFunction(const FunctionInfo& input) {
  in_progress_.insert(input.key);
  FunctionInfo fn = input;
  FunctionPass(*this, fn).run();
  in_progress_.erase(input.key);
  return fn;
}

}  // namespace perfhat::analysis
