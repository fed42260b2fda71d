// Calls: measured call sites, the call-site regression, the callee's overall distribution, or
// the callee's body analysed recursively (inference.h).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <vector>

#include "common/function_key.h"
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

Estimate Inference::inferCall(Node& node, const FunctionInfo& fn, const MatchResult& callee) {
  Estimate e;
  const FeedbackItem* item = callee.item;
  if (item && item->stats) {
    const Stats& overall = *item->stats;
    // Regression of callee latency over the parents' workload, across the callee's call sites.
    std::vector<const CallSiteStats*> sites;
    for (const auto& c : item->callsites)
      if (c.count > 0 && c.mean_ns > 0) sites.push_back(&c);
    bool all_sizes = !sites.empty() && std::all_of(sites.begin(), sites.end(), [](auto* c) {
      return c->caller_input_size.has_value();
    });
    bool any_rate =
        std::any_of(sites.begin(), sites.end(), [](auto* c) { return c->caller_rate_per_s > 0; });
    if (!sites.empty() && (any_rate || all_sizes)) {
      std::vector<std::vector<double>> X;
      std::vector<double> y, w;
      double wsum = 0, mean_rate = 0, mean_size = 0, mean_y = 0;
      uint64_t samples = 0;
      for (auto* c : sites) {
        std::vector<double> row{1.0, c->caller_rate_per_s};
        if (all_sizes) row.push_back(*c->caller_input_size);
        X.push_back(row);
        y.push_back(c->mean_ns);
        double wt = static_cast<double>(c->count);
        w.push_back(wt);
        wsum += wt;
        mean_rate += wt * c->caller_rate_per_s;
        mean_size += wt * (all_sizes ? *c->caller_input_size : 0);
        mean_y += wt * c->mean_ns;
        samples += c->count;
      }
      mean_rate /= wsum;
      mean_size /= wsum;
      mean_y /= wsum;
      double rate = fn.root().measured && fn.root().measured->rate_per_s > 0
                        ? fn.root().measured->rate_per_s
                        : mean_rate;
      std::vector<double> beta;
      double predicted = mean_y;
      bool fitted = leastSquares(X, y, w, beta);
      if (!fitted && all_sizes) {  // collinear sizes: retry on rate only
        for (auto& row : X) row.pop_back();
        fitted = leastSquares(X, y, w, beta);
      }
      // The model is only trusted inside the workloads it was learned from: this parent's rate
      // is clamped to the observed range (no extrapolation), and the fit is shrunk toward the
      // call sites' weighted mean by how much of their variation it explains (adjusted R²),
      // so a fit through as many points as it has parameters, or a poor one, falls back to
      // the mean instead of following noise.
      double r2_adj = 0;
      double rate_lo = 0, rate_hi = 0;
      if (fitted) {
        rate_lo = rate_hi = X[0][1];
        for (const auto& row : X) {
          rate_lo = std::min(rate_lo, row[1]);
          rate_hi = std::max(rate_hi, row[1]);
        }
        const double x_rate = std::clamp(rate, rate_lo, rate_hi);
        auto fitAt = [&](const std::vector<double>& row) {
          double v = 0;
          for (size_t i = 0; i < beta.size(); ++i) v += beta[i] * row[i];
          return v;
        };
        std::vector<double> at{1.0, x_rate};
        if (beta.size() > 2) at.push_back(mean_size);
        double ss_res = 0, ss_tot = 0;
        for (size_t r = 0; r < X.size(); ++r) {
          ss_res += w[r] * (y[r] - fitAt(X[r])) * (y[r] - fitAt(X[r]));
          ss_tot += w[r] * (y[r] - mean_y) * (y[r] - mean_y);
        }
        const double n_sites = static_cast<double>(X.size());
        const double k = static_cast<double>(beta.size());
        if (ss_tot > 0 && n_sites > k) {
          double r2 = 1 - ss_res / ss_tot;
          r2_adj = std::clamp(1 - (1 - r2) * (n_sites - 1) / (n_sites - k), 0.0, 1.0);
        }
        predicted = r2_adj * fitAt(at) + (1 - r2_adj) * mean_y;
      }
      double lo = *std::min_element(y.begin(), y.end());
      double hi = *std::max_element(y.begin(), y.end());
      predicted = std::clamp(predicted, lo, hi);
      double ratio = overall.mean_ns > 0 ? predicted / overall.mean_ns : 1.0;
      // This caller's context may be any of the observed ones: the sites' range.
      if (predicted > 0) {
        e.spread_lo = lo / predicted;
        e.spread_hi = hi / predicted;
      }
      // One context observed (or all alike) says nothing of how another caller's context moves
      // the cost: its mean may lie anywhere in the bulk of the calls seen, p50 to p90 of the
      // site's own distribution (of the callee's, where the site records no percentiles).
      if (predicted > 0 && !(hi > lo)) {
        const CallSiteStats& only = *sites.front();
        const bool own = sites.size() == 1 && only.p50_ns > 0 && only.p90_ns > 0;
        const double p50 = own ? only.p50_ns : overall.p50_ns * ratio;
        const double p90 = own ? only.p90_ns : overall.p90_ns * ratio;
        if (p50 > 0 && p90 > 0) {
          e.spread_lo = std::min(1.0, p50 / predicted);
          e.spread_hi = std::max(1.0, p90 / predicted);
          if (e.spread_lo < 1 || e.spread_hi > 1)
            e.derivation.assumptions.push_back(fact::OneContext{p50, p90});
        }
      }
      widenForOtherInputs(*item, predicted, e);
      e.provenance = Provenance::Inferred;
      e.dist = scaleDist(fromStats(overall), ratio);
      e.dist.mean_ns = predicted;
      e.dist.samples = samples;
      e.floor_mean_ns = predicted;
      e.derivation.model = Model::CallsiteRegression;
      e.derivation.summary = fact::Regression{predicted, rate, fn.name};
      e.derivation.inputs.push_back({{}, fact::CallSitesUsed{sites.size(), displayName(node)}});
      for (auto* c : sites)
        e.derivation.inputs.push_back(
            {{}, fact::CallSiteSeen{c->caller, c->mean_ns, c->caller_rate_per_s}});
      if (fitted) {
        e.derivation.inputs.push_back({{}, fact::RegressionModel{beta, r2_adj}});
        if (r2_adj < 1) e.derivation.assumptions.push_back(fact::WeakFit{r2_adj});
        if (rate < rate_lo || rate > rate_hi)
          e.derivation.assumptions.push_back(fact::OutsideObserved{rate, rate_lo, rate_hi});
      } else
        e.derivation.assumptions.push_back(fact::ConstantWorkloads{});
      if (!(fn.root().measured && fn.root().measured->rate_per_s > 0))
        e.derivation.assumptions.push_back(fact::WorkloadUnknown{fn.name});
      if (all_sizes) e.derivation.assumptions.push_back(fact::InputSizeAtMean{mean_size});
      return e;
    }
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
    e.derivation.summary = fact::CalleeOverall{overall.mean_ns, displayName(node), overall.count};
    e.derivation.inputs.push_back(
        {{}, fact::CalleeStats{displayName(node), overall.mean_ns, overall.p99_ns}});
    e.derivation.assumptions.push_back(fact::NoCallSiteData{});
    widenForOtherInputs(*item, overall.mean_ns, e);
    return e;
  }
  if (node.callee_in_workspace && !node.callee_key.empty()) {
    Estimate body = bodyEstimate(node.callee_key);
    if (body.known()) {
      e.provenance = Provenance::Inferred;
      e.dist = body.dist;
      e.floor_mean_ns = body.floor_mean_ns;
      e.spread_lo = body.spread_lo;
      e.spread_hi = body.spread_hi;
      e.unknown_parts = body.unknown_parts;
      e.derivation.model = Model::WorkspaceBody;
      e.derivation.summary = fact::FromBody{body.dist.mean_ns, displayName(node)};
      e.derivation.inputs.push_back(
          {{}, fact::BodySummary{node.callee_key, body.derivation.summary}});
      e.derivation.assumptions = body.derivation.assumptions;
      // A body from another file (a header, or the workspace index) is named: the estimate
      // rests on that file as it is now.
      const FunctionInfo* callee_body = findBody(node.callee_key);
      std::string where;
      if (callee_body && !callee_body->file.empty() && callee_body->file != fn.file)
        where = std::filesystem::path(callee_body->file).filename().string();
      e.derivation.assumptions.insert(e.derivation.assumptions.begin(),
                                      fact::BodyAnalysed{displayName(node), where});
      return e;
    }
    e.derivation = body.derivation;
    // A body without calls or loops keeps its model: it is negligible, not an unknown part.
    if (e.derivation.model != Model::Leaf) e.derivation.model = Model::WorkspaceBody;
    if (!e.derivation.hasSummary()) e.derivation.summary = fact::BodyCostUnknown{};
    return e;
  }
  e.derivation.model = Model::None;
  e.derivation.summary = fact::NoData{displayName(node)};
  return e;
}

}  // namespace perfhat::analysis
