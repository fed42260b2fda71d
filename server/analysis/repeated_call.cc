// A lazily loaded value is loaded once per object: a second call of a two-outcome callee on the
// same local object, after a call of it that surely ran in the same iteration, finds the value
// loaded and costs the fast outcome (`story.tasks()` in a loop header and again in the body).
#include "server/analysis/inference_parts.h"

namespace perfhat::analysis {

using namespace inference_detail;  // NOLINT(google-build-using-namespace): the units of one class

bool Inference::takeRepeatedCallFast(const Node& call, const FunctionInfo& fn,
                                     const MatchResult& callee, Estimate& e) const {
  if (!e.known() || call.call.receiver_var.empty() || call.call.key.empty()) return false;
  if (!callee.item || !callee.item->stats) return false;
  const std::optional<double> loaded =
      loadedOutcome(*callee.item->stats, options_.context_bimodal_ratio);
  if (!loaded || !(*loaded < e.dist.mean_ns)) return false;
  const double fast = *loaded;
  // The later call may sit in an arm; the earlier one must surely have run in the same scope.
  const int scope = loopScope(fn, call, false);
  const Node* earlier = nullptr;
  for (const Node& m : fn.nodes) {
    if (m.id >= call.id) break;  // pre-order: earlier in the source
    if (m.kind == NodeKind::Call && m.call.key == call.call.key &&
        m.call.receiver_var == call.call.receiver_var && loopScope(fn, m, true) == scope) {
      earlier = &m;
      break;
    }
  }
  if (!earlier) return false;
  const Stats& s = *callee.item->stats;
  const double slow = e.dist.mean_ns;
  e.dist.mean_ns = e.dist.p50_ns = e.dist.p90_ns = e.dist.p99_ns = fast;
  // The figure is the callee's loaded outcome, inferred from its overall distribution: not the
  // call site's measurement, even where the call took a site's figure first.
  e.provenance = Provenance::Inferred;
  e.derivation.model = Model::CalleeOverall;
  e.floor_mean_ns = fast;
  e.spread_lo = e.spread_hi = 1;
  e.context_extra_ns = 0;
  const int line = earlier->range.start.line + 1;
  e.derivation.summary = fact::RepeatedFast{fast, callName(call), line};
  const double slow_outcome = slowOutcome(s, options_.context_bimodal_ratio);
  e.derivation.assumptions.push_back(
      fact::TwoOutcomesRepeated{callName(call), s.p50_ns, slow_outcome > 0,
                                slow_outcome > 0 ? slow_outcome : s.min_ns, line, slow});
  return true;
}

}  // namespace perfhat::analysis
