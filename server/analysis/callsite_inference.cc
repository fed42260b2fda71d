// Calls: measured call sites, the call-site regression, the callee's overall distribution, or
// the callee's body analysed recursively (inference.h).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <vector>

#include "common/function_key.h"
#include "server/analysis/callsite_regression.h"
#include "server/analysis/inference_parts.h"

namespace perfhat::analysis {

using namespace inference_detail;  // NOLINT(google-build-using-namespace): the units of one class

Estimate Inference::bodyEstimate(const std::string& key) {
  if (auto it = memo_.find(key); it != memo_.end()) return it->second;
  Estimate e;
  e.derivation.model = Model::WorkspaceBody;
  const FunctionInfo* body = findBody(key);
  if (!body) {
    e.derivation.summary = fact::BodyUnavailable{};
    return e;
  }
  if (in_progress_.count(key)) {
    e.derivation.summary = fact::RecursiveCall{};
    recursion_cuts_.push_back(key);
    return e;  // not memoized: the outer evaluation decides
  }
  // Each level analyses a body on the stack: a generated chain of thousands of functions calling
  // the next one stops here, visibly (not memoized: a shorter path may reach it).
  if (static_cast<int>(in_progress_.size()) >= options_.max_body_depth) {
    e.derivation.summary = fact::DepthTruncated{options_.max_body_depth};
    return e;
  }
  const size_t cuts_before = recursion_cuts_.size();
  FunctionInfo analysed = analyzeFunction(*body);
  e = analysed.root().estimate;
  // A cycle below this body (within a file or across files through the workspace index) was
  // cut: say so where the estimate is shown, not only deep in a nested derivation.
  if (recursion_cuts_.size() > cuts_before) {
    fact::RecursionCut note{recursion_cuts_[cuts_before]};
    if (e.known())
      e.derivation.assumptions.push_back(note);
    else
      e.derivation.summary = note;
  }
  memo_[key] = e;
  return e;
}

// Every call production measured returned about as many elements (one kind of input seen), so
// the data cannot show how the callee's cost follows its input, and the call being costed has no
// call site of its own (one with a site takes it and does not come here): its caller may pass
// inputs of any size. The range reaches down to one element's share of the cost, the cost taken
// as proportional to the result. Where the sizes varied and the costs did not (a fixed query
// cost), or both did, the data's own range stands.
void Inference::widenForOtherInputs(const FeedbackItem& callee, double predicted,
                                    Estimate& e) const {
  if (!(predicted > 0) || !callee.result_size) return;
  const SizeStats& size = *callee.result_size;
  if (!(size.mean > 1) || size.p90 > options_.one_input_size_spread * size.mean) return;
  const double one_element = predicted / size.mean;
  if (!(one_element < e.spread_lo * predicted)) return;
  e.spread_lo = one_element / predicted;
  e.derivation.assumptions.push_back(fact::OtherInputs{one_element, size.mean});
}

namespace {

// One context observed (or all alike) says nothing of how another caller's context moves the
// cost: its mean may lie anywhere in the bulk of the calls seen, p50 to p90 of the site's own
// distribution (of the callee's, where the site records no percentiles).
void spreadOverOneContext(const SiteRegression& r, const Stats& overall, double ratio,
                          Estimate& e) {
  const CallSiteStats& only = *r.sites.front();
  const bool own = r.sites.size() == 1 && only.p50_ns > 0 && only.p90_ns > 0;
  const double p50 = own ? only.p50_ns : overall.p50_ns * ratio;
  const double p90 = own ? only.p90_ns : overall.p90_ns * ratio;
  if (p50 > 0 && p90 > 0) {
    e.spread_lo = std::min(1.0, p50 / r.predicted);
    e.spread_hi = std::max(1.0, p90 / r.predicted);
    if (e.spread_lo < 1 || e.spread_hi > 1)
      e.derivation.assumptions.push_back(fact::OneContext{p50, p90});
  }
}

}  // namespace

Estimate Inference::regressionEstimate(const Node& node, const FunctionInfo& fn,
                                       const FeedbackItem& callee, const SiteRegression& r) const {
  const Stats& overall = *callee.stats;
  Estimate e;
  double ratio = overall.mean_ns > 0 ? r.predicted / overall.mean_ns : 1.0;
  // This caller's context may be any of the observed ones: the sites' range.
  if (r.predicted > 0) {
    e.spread_lo = r.lo / r.predicted;
    e.spread_hi = r.hi / r.predicted;
  }
  if (r.predicted > 0 && !(r.hi > r.lo)) spreadOverOneContext(r, overall, ratio, e);
  widenForOtherInputs(callee, r.predicted, e);
  e.provenance = Provenance::Inferred;
  e.dist = scaleDist(fromStats(overall), ratio);
  e.dist.mean_ns = r.predicted;
  e.dist.samples = r.samples;
  e.floor_mean_ns = r.predicted;
  Derivation& d = e.derivation;
  d.model = Model::CallsiteRegression;
  d.summary = fact::Regression{r.predicted, r.rate, fn.name};
  d.inputs.push_back({{}, fact::CallSitesUsed{r.sites.size(), callName(node)}});
  for (auto* c : r.sites)
    d.inputs.push_back({{}, fact::CallSiteSeen{c->caller, c->mean_ns, c->caller_rate_per_s}});
  if (r.fitted) {
    d.inputs.push_back({{}, fact::RegressionModel{r.beta, r.r2_adj}});
    if (r.r2_adj < 1) d.assumptions.push_back(fact::WeakFit{r.r2_adj});
    if (r.rate < r.rate_lo || r.rate > r.rate_hi)
      d.assumptions.push_back(fact::OutsideObserved{r.rate, r.rate_lo, r.rate_hi});
  } else
    d.assumptions.push_back(fact::ConstantWorkloads{});
  if (!(fn.root().measured && fn.root().measured->rate_per_s > 0))
    d.assumptions.push_back(fact::WorkloadUnknown{fn.name});
  if (r.sizes) d.assumptions.push_back(fact::InputSizeAtMean{r.mean_size});
  return e;
}

Estimate Inference::calleeOverallEstimate(const Node& node, const FeedbackItem& callee) const {
  const Stats& overall = *callee.stats;
  Estimate e;
  e.provenance = Provenance::Inferred;
  e.dist = fromStats(overall);
  e.floor_mean_ns = overall.mean_ns;
  // Which calls this caller makes (cached or loading, early return or not) is not known: its
  // mean may lie anywhere in the bulk of the callee's distribution.
  if (overall.mean_ns > 0) {
    e.spread_lo = std::min(1.0, overall.p50_ns / overall.mean_ns);
    e.spread_hi = std::max(1.0, overall.p90_ns / overall.mean_ns);
  }
  e.derivation.model = Model::CalleeOverall;
  e.derivation.summary = fact::CalleeOverall{overall.mean_ns, callName(node), overall.count};
  e.derivation.inputs.push_back(
      {{}, fact::CalleeStats{callName(node), overall.mean_ns, overall.p99_ns}});
  e.derivation.assumptions.push_back(fact::NoCallSiteData{});
  widenForOtherInputs(callee, overall.mean_ns, e);
  return e;
}

Estimate Inference::calleeBodyEstimate(const Node& node, const FunctionInfo& fn) {
  Estimate e;
  Estimate body = bodyEstimate(node.call.key);
  if (!body.known()) {
    e.derivation = body.derivation;
    // A body without calls or loops keeps its model: it is negligible, not an unknown part.
    if (e.derivation.model != Model::Leaf) e.derivation.model = Model::WorkspaceBody;
    if (!e.derivation.hasSummary()) e.derivation.summary = fact::BodyCostUnknown{};
    return e;
  }
  e.provenance = Provenance::Inferred;
  e.dist = body.dist;
  e.floor_mean_ns = body.floor_mean_ns;
  e.spread_lo = body.spread_lo;
  e.spread_hi = body.spread_hi;
  e.unknown_parts = body.unknown_parts;
  e.derivation.model = Model::WorkspaceBody;
  e.derivation.summary = fact::FromBody{body.dist.mean_ns, callName(node)};
  e.derivation.inputs.push_back({{}, fact::BodySummary{node.call.key, body.derivation.summary}});
  e.derivation.assumptions = body.derivation.assumptions;
  // A body from another file (a header, or the workspace index) is named: the estimate rests on
  // that file as it is now.
  const FunctionInfo* callee_body = findBody(node.call.key);
  std::string where;
  if (callee_body && !callee_body->file.empty() && callee_body->file != fn.file)
    where = std::filesystem::path(callee_body->file).filename().string();
  e.derivation.assumptions.insert(e.derivation.assumptions.begin(),
                                  fact::BodyAnalysed{callName(node), where});
  return e;
}

Estimate Inference::inferCall(Node& node, const FunctionInfo& fn, const MatchResult& callee) {
  if (const FeedbackItem* item = callee.item; item && item->stats) {
    // Regression of callee latency over the parents' workload, across the callee's call sites.
    const Node& root = fn.root();
    const double rate =
        root.measured && root.measured->rate_per_s > 0 ? root.measured->rate_per_s : 0;
    if (std::optional<SiteRegression> r = regressOnWorkload(*item, rate))
      return regressionEstimate(node, fn, *item, *r);
    return calleeOverallEstimate(node, *item);
  }
  if (node.call.in_workspace && !node.call.key.empty()) return calleeBodyEstimate(node, fn);
  Estimate e;
  e.derivation.model = Model::None;
  e.derivation.summary = fact::NoData{callName(node)};
  return e;
}

}  // namespace perfhat::analysis
