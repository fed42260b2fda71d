// Callee cost that depends on the caller's context (DESIGN §6): a measured helper called from a
// new place may find its state in another condition there than production's callers did. When
// its body holds a call whose production distribution shows two outcomes — a lazily loaded or
// cached value, fast when loaded, slow when it loads — the caller's own calls of that inner
// callee say which outcome the new call takes:
//  * none at all, and the new call runs per element of a collection this caller fetches (a
//    range-for over a producer's result): nothing here loads the value of those fresh objects,
//    so the new call is the first access and costs the slow outcome (its range still reaches
//    down to the fast one, in case the producer loads it);
//  * one that production measured from this caller in the fast outcome (the objects arrive
//    loaded here), or one that surely ran before the new call in the same loop iteration: the
//    fast outcome, as production's callers saw it;
//  * otherwise (objects from elsewhere, a call after it, in a branch, or measured loading):
//    unknown, so the slow outcome is the top of the call's range, and the estimate says which
//    inner call it rests on.
#include <algorithm>
#include <cmath>

#include "server/analysis/inference_parts.h"

namespace perfhat::analysis {

using namespace inference_detail;  // NOLINT(google-build-using-namespace): the units of one class

namespace {

enum class Outcome { Fast, Slow, Unknown };

// Whether `n` runs in the body of a range-for over a collection a call of `fn` produces.
bool perFetchedElement(const FunctionInfo& fn, const Node& n) {
  const Node* p = &n;
  while (p->parent >= 0 && p->parent < static_cast<int>(fn.nodes.size())) {
    const Node& up = fn.nodes[p->parent];
    if (up.kind == NodeKind::Loop && p->arm != -1 && !up.loop.producer_key.empty()) return true;
    p = &up;
  }
  return false;
}

// Which outcome of the inner callee `inner` the new call `call` of `fn` takes (see above).
Outcome outcomeHere(const FunctionInfo& fn, const Node& call, const std::string& inner,
                    double slow_ns, double ratio) {
  const int scope = loopScope(fn, call, false);
  bool any = false;
  for (const Node& m : fn.nodes) {
    if (m.kind != NodeKind::Call || m.id == call.id || m.call.key != inner) continue;
    any = true;
    const bool measured_fast =
        m.estimate.provenance == Provenance::Measured && m.estimate.dist.mean_ns * ratio <= slow_ns;
    const bool surely_before = m.id < call.id && loopScope(fn, m, true) == scope;
    if (measured_fast || surely_before) return Outcome::Fast;
  }
  return !any && perFetchedElement(fn, call) ? Outcome::Slow : Outcome::Unknown;
}

}  // namespace

const Inference::CalleeContext& Inference::contextOf(const std::string& key) {
  auto memo = context_memo_.find(key);
  if (memo == context_memo_.end()) {
    CalleeContext out;
    const FunctionInfo* body = findBody(key);
    if (body && !in_progress_.count(key) &&
        static_cast<int>(in_progress_.size()) < options_.max_body_depth) {
      const FunctionInfo helper = analyzeFunction(*body);
      for (const Node& c : helper.nodes) {
        if (c.kind != NodeKind::Call || !c.measured || c.measured->count == 0) continue;
        const double slow = loadingOutcome(*c.measured, options_.context_bimodal_ratio);
        // What the call costs where production ran the helper: its call site from the helper,
        // else the fast outcome.
        const double fast = c.estimate.provenance == Provenance::Measured
                                ? c.estimate.dist.mean_ns
                                : fastOutcome(*c.measured, options_.context_bimodal_ratio);
        if (!(slow > fast)) continue;
        const double times = c.call.production_calls > 0
                                 ? c.call.production_calls
                                 : product(executionFactors(helper, c), false);
        if (!(times > 0)) continue;
        out.extra_ns += (slow - fast) * times;
        out.extras.push_back((slow - fast) * times);
        out.inner_keys.push_back(c.call.key);
        out.outcomes.push_back({callName(c), {body->name, {}}, c.measured->p50_ns, slow, times});
      }
    }
    memo = context_memo_.emplace(key, std::move(out)).first;
  }
  return memo->second;
}

void Inference::addCalleeContext(const Node& call, const FunctionInfo& fn, Estimate& e) {
  if (e.provenance != Provenance::Inferred || !(e.dist.mean_ns > 0)) return;
  // Only a measured callee (its cost learned from other callers) hides its context; a body
  // analysed without data already sums its parts' own distributions.
  if (e.derivation.model != Model::CallsiteRegression && e.derivation.model != Model::CalleeOverall)
    return;
  if (!call.call.in_workspace || call.call.key.empty()) return;
  const CalleeContext& out = contextOf(call.call.key);
  if (!(out.extra_ns > 0)) return;
  // Split the outcomes by what this caller's own calls of each inner callee say.
  double slow_extra = 0, unknown_extra = 0;
  std::vector<fact::ContextOutcome> slow, unknown;
  for (size_t i = 0; i < out.outcomes.size(); ++i) {
    switch (outcomeHere(fn, call, out.inner_keys[i], out.outcomes[i].slow_ns,
                        options_.context_bimodal_ratio)) {
      case Outcome::Fast:
        break;
      case Outcome::Slow:
        slow_extra += out.extras[i];
        slow.push_back(out.outcomes[i]);
        break;
      case Outcome::Unknown:
        unknown_extra += out.extras[i];
        unknown.push_back(out.outcomes[i]);
        break;
    }
  }
  const double base = e.dist.mean_ns;
  const double lo = base * e.spread_lo, hi = base * e.spread_hi;
  if (slow_extra > 0) {
    e.dist.mean_ns += slow_extra;
    e.dist.p50_ns += slow_extra;
    e.dist.p90_ns += slow_extra;
    e.dist.p99_ns += slow_extra;
    e.floor_mean_ns += slow_extra;
    // The range keeps the fast outcome at its bottom: the first access may find the value
    // loaded after all (by a caller further up, or a producer that loads it).
    e.spread_lo = lo / e.dist.mean_ns;
    e.spread_hi = std::max(1.0, (hi + slow_extra) / e.dist.mean_ns);
    e.derivation.assumptions.push_back(fact::FirstAccessHere{slow, slow_extra});
  }
  if (unknown_extra > 0) {
    e.context_extra_ns = unknown_extra;
    e.context = unknown;
    e.spread_hi = std::max(e.spread_hi, (e.dist.mean_ns + unknown_extra) / e.dist.mean_ns);
    e.derivation.assumptions.push_back(fact::ContextDependent{unknown, unknown_extra});
  }
}

}  // namespace perfhat::analysis
