// Callee cost that depends on the caller's context (DESIGN §6): a measured helper called from a
// new place may find its state in another condition there than production's callers did. When
// its body holds a call whose production distribution shows two outcomes — a lazily loaded or
// cached value, fast when loaded, slow when it loads — the new call's range reaches the slow
// outcome, and the estimate says which inner call it rests on.
#include <algorithm>
#include <cmath>

#include "server/analysis/inference_parts.h"

namespace perfhat::analysis {

using namespace inference_detail;  // NOLINT(google-build-using-namespace): the units of one class

void Inference::addCalleeContext(const Node& call, Estimate& e) {
  if (e.provenance != Provenance::Inferred || !(e.dist.mean_ns > 0)) return;
  // Only a measured callee (its cost learned from other callers) hides its context; a body
  // analysed without data already sums its parts' own distributions.
  if (e.derivation.model != Model::CallsiteRegression && e.derivation.model != Model::CalleeOverall)
    return;
  if (!call.callee_in_workspace || call.callee_key.empty()) return;
  const std::string& key = call.callee_key;
  auto memo = context_memo_.find(key);
  if (memo == context_memo_.end()) {
    CalleeContext out;
    const FunctionInfo* body = findBody(key);
    if (body && !in_progress_.count(key) &&
        static_cast<int>(in_progress_.size()) < options_.max_body_depth) {
      const FunctionInfo helper = analyzeFunction(*body);
      for (const Node& c : helper.nodes) {
        if (c.kind != NodeKind::Call || !c.measured || c.measured->count == 0) continue;
        const double slow = slowOutcome(*c.measured, options_.context_bimodal_ratio);
        // What the call costs where production ran the helper: its call site from the helper,
        // else the fast outcome.
        const double fast = c.estimate.provenance == Provenance::Measured ? c.estimate.dist.mean_ns
                                                                          : c.measured->p50_ns;
        if (!(slow > fast)) continue;
        const double times = c.production_calls > 0 ? c.production_calls
                                                    : product(executionFactors(helper, c), false);
        if (!(times > 0)) continue;
        out.extra_ns += (slow - fast) * times;
        out.outcomes.push_back(
            {displayName(c), displayName(call), c.measured->p50_ns, slow, times});
      }
    }
    memo = context_memo_.emplace(key, std::move(out)).first;
  }
  const CalleeContext& out = memo->second;
  if (!(out.extra_ns > 0)) return;
  e.context_extra_ns = out.extra_ns;
  e.context = out.outcomes;
  e.spread_hi = std::max(e.spread_hi, (e.dist.mean_ns + out.extra_ns) / e.dist.mean_ns);
  e.derivation.assumptions.push_back(fact::ContextDependent{out.outcomes, out.extra_ns});
}

}  // namespace perfhat::analysis
