#include "server/analysis/inference.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <deque>
#include <vector>

#include "common/function_key.h"

namespace perfhat::analysis {

std::string formatDuration(double ns) {
  char buf[64];
  double a = std::abs(ns);
  auto fmt = [&](double v, const char* unit) {
    int decimals = v >= 100 ? 0 : v >= 10 ? 1 : 2;
    std::snprintf(buf, sizeof buf, "%.*f %s", decimals, v, unit);
  };
  if (a >= 1e9)
    fmt(ns / 1e9, "s");
  else if (a >= 1e6)
    fmt(ns / 1e6, "ms");
  else if (a >= 1e3)
    fmt(ns / 1e3, "µs");
  else
    fmt(ns, "ns");
  return buf;
}

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

namespace {

Distribution fromCallSite(const CallSiteStats& c) {
  return Distribution{c.mean_ns, c.p50_ns > 0 ? c.p50_ns : c.mean_ns,
                      c.p90_ns > 0 ? c.p90_ns : c.mean_ns, c.p99_ns > 0 ? c.p99_ns : c.mean_ns,
                      c.count};
}

// The relative half-width of a z-range around a mean measured over `count` calls: z·SE/mean, with
// σ from the spread as (p90 − p50) / 1.2816 (the normal p90 lies 1.2816 σ above the median).
double relativeError(double mean, double p50, double p90, uint64_t count, double z) {
  if (count == 0 || mean <= 0 || !(p90 > p50)) return 0;
  const double sigma = (p90 - p50) / 1.2816;
  return std::min(1.0, z * sigma / std::sqrt(static_cast<double>(count)) / mean);
}

void setSpread(Estimate& e, double rel) {
  e.spread_lo = 1 - rel;
  e.spread_hi = 1 + rel;
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

std::string displayName(const Node& n) {
  return n.callee_name.empty() ? n.callee_key : n.callee_name + "()";
}

void attach(Node& n, const FeedbackItem& item) {
  n.measured = item.stats;
  n.baseline = item.baseline;
  n.versions = item.versions;
  n.hosts = item.hosts;
  n.dropped_calls = item.dropped_calls;
}

// Callers as the runtime spelled them, normalized once per analysis (hot: every call node).
const std::string& canonicalCaller(const std::string& caller,
                                   std::unordered_map<std::string, std::string>& cache) {
  auto it = cache.find(caller);
  if (it == cache.end()) it = cache.emplace(caller, normalizeFunctionKey(caller)).first;
  return it->second;
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

// Weighted least squares y = X·β (normal equations, Gaussian elimination with pivoting).
// Returns false when the system is singular (e.g. every site has the same workload).
bool leastSquares(const std::vector<std::vector<double>>& X, const std::vector<double>& y,
                  const std::vector<double>& w, std::vector<double>& beta) {
  size_t k = X.empty() ? 0 : X[0].size();
  if (k == 0 || X.size() < k) return false;
  std::vector<std::vector<double>> A(k, std::vector<double>(k + 1, 0));
  for (size_t r = 0; r < X.size(); ++r)
    for (size_t i = 0; i < k; ++i) {
      for (size_t j = 0; j < k; ++j) A[i][j] += w[r] * X[r][i] * X[r][j];
      A[i][k] += w[r] * X[r][i] * y[r];
    }
  for (size_t c = 0; c < k; ++c) {
    size_t piv = c;
    for (size_t r = c + 1; r < k; ++r)
      if (std::abs(A[r][c]) > std::abs(A[piv][c])) piv = r;
    double scale = 0;
    for (size_t j = 0; j < k; ++j) scale = std::max(scale, std::abs(A[c][j]));
    if (std::abs(A[piv][c]) <= 1e-12 * std::max(scale, 1.0)) return false;
    std::swap(A[c], A[piv]);
    for (size_t r = 0; r < k; ++r) {
      if (r == c) continue;
      double f = A[r][c] / A[c][c];
      for (size_t j = c; j <= k; ++j) A[r][j] -= f * A[c][j];
    }
  }
  beta.assign(k, 0);
  for (size_t i = 0; i < k; ++i) beta[i] = A[i][k] / A[i][i];
  return true;
}

std::string fmtNumber(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace

namespace {

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

}  // namespace

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

Estimate Inference::bodyEstimate(const std::string& key) {
  if (auto it = memo_.find(key); it != memo_.end()) return it->second;
  Estimate e;
  e.derivation.model = "workspace-body";
  const FunctionInfo* body = findBody(key);
  if (!body) {
    e.derivation.summary = "body not available";
    return e;
  }
  if (in_progress_.count(key)) {
    e.derivation.summary = "recursive call: cost of the recursion unknown";
    return e;  // not memoized: the outer evaluation decides
  }
  // Each level analyses a body on the stack: a generated chain of thousands of functions calling
  // the next one stops here, visibly (not memoized: a shorter path may reach it).
  if (static_cast<int>(in_progress_.size()) >= options_.max_body_depth) {
    e.derivation.summary =
        "analysis truncated: the chain of callees without production data is "
        "deeper than " +
        std::to_string(options_.max_body_depth) + " bodies";
    return e;
  }
  FunctionInfo analysed = analyzeFunction(*body);
  e = analysed.root().estimate;
  memo_[key] = e;
  return e;
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
      e.provenance = Provenance::Inferred;
      e.dist = scaleDist(fromStats(overall), ratio);
      e.dist.mean_ns = predicted;
      e.dist.samples = samples;
      e.floor_mean_ns = predicted;
      e.derivation.model = "callsite-regression";
      e.derivation.summary =
          formatDuration(predicted) + " at " + fmtNumber(rate) + " calls/s of " + fn.name + "()";
      e.derivation.inputs.push_back(std::to_string(sites.size()) + " call site(s) of " +
                                    displayName(node) + " in other callers");
      for (auto* c : sites)
        e.derivation.inputs.push_back(c->caller + ": " + formatDuration(c->mean_ns) + " at " +
                                      fmtNumber(c->caller_rate_per_s) + " calls/s");
      if (fitted) {
        e.derivation.inputs.push_back(
            "model: latency = " + fmtNumber(beta[0]) + " ns + " + fmtNumber(beta[1]) +
            " ns × rate" +
            (beta.size() > 2 ? " + " + fmtNumber(beta[2]) + " ns × size" : std::string()) +
            ", adjusted R² " + fmtNumber(r2_adj));
        if (r2_adj < 1)
          e.derivation.assumptions.push_back(
              "weak fit: shrunk toward the call sites' mean latency by " + fmtNumber(1 - r2_adj) +
              " (adjusted R² " + fmtNumber(r2_adj) + ")");
        if (rate < rate_lo || rate > rate_hi)
          e.derivation.assumptions.push_back("workload " + fmtNumber(rate) +
                                             " calls/s outside the observed " + fmtNumber(rate_lo) +
                                             "–" + fmtNumber(rate_hi) +
                                             ": predicted at the nearest observed workload");
      } else
        e.derivation.assumptions.push_back(
            "workloads of the call sites do not vary: their weighted mean is used");
      if (!(fn.root().measured && fn.root().measured->rate_per_s > 0))
        e.derivation.assumptions.push_back("workload of " + fn.name +
                                           "() unknown: the call sites' mean workload is assumed");
      if (all_sizes)
        e.derivation.assumptions.push_back("input size of this caller assumed at the mean (" +
                                           fmtNumber(mean_size) + ")");
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
    e.derivation.model = "callee-overall";
    e.derivation.summary = formatDuration(overall.mean_ns) + " (" + displayName(node) +
                           " overall, " + std::to_string(overall.count) + " calls)";
    e.derivation.inputs.push_back(displayName(node) + ": mean " + formatDuration(overall.mean_ns) +
                                  ", p99 " + formatDuration(overall.p99_ns));
    e.derivation.assumptions.push_back(
        "no call-site workload data: the callee's overall distribution is used");
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
      e.derivation.model = "workspace-body";
      e.derivation.summary =
          formatDuration(body.dist.mean_ns) + " from the body of " + displayName(node);
      e.derivation.inputs.push_back(node.callee_key + ": " + body.derivation.summary);
      e.derivation.assumptions = body.derivation.assumptions;
      e.derivation.assumptions.insert(
          e.derivation.assumptions.begin(),
          "no production data for " + displayName(node) + ": its body was analysed");
      return e;
    }
    e.derivation = body.derivation;
    // A body without calls or loops keeps its model: it is negligible, not an unknown part.
    if (e.derivation.model != "leaf") e.derivation.model = "workspace-body";
    if (e.derivation.summary.empty())
      e.derivation.summary = "no production data; the body's cost is unknown";
    return e;
  }
  e.derivation.model = "none";
  e.derivation.summary = "no production data for " + displayName(node);
  return e;
}

namespace {

bool isLeaf(const Estimate& e) { return !e.known() && e.derivation.model == "leaf"; }

struct Sum {
  Distribution dist;
  bool any_known = false;
  bool all_measured = true;
  double floor = 0;
  int unknown_parts = 0;  // unknown children plus the unknown parts of known ones
  std::vector<std::string> inputs;
  std::vector<std::string> unknown;
  std::vector<std::string> negligible;
  void add(const Node& n) {
    if (isLeaf(n.estimate)) {  // no calls or loops: negligible (stated), not unknown
      negligible.push_back(displayName(n));
      all_measured = false;
      return;
    }
    if (!n.estimate.known()) {
      unknown.push_back(n.kind == NodeKind::Call ? displayName(n) : "a nested block");
      all_measured = false;
      ++unknown_parts;
      return;
    }
    dist = any_known ? addDist(dist, n.estimate.dist) : n.estimate.dist;
    any_known = true;
    floor += n.estimate.floor_mean_ns;
    unknown_parts += n.estimate.unknown_parts;
    if (n.estimate.provenance != Provenance::Measured) all_measured = false;
    std::string what = n.kind == NodeKind::Call ? displayName(n)
                       : n.kind == NodeKind::Loop
                           ? "loop at line " + std::to_string(n.range.start.line + 1)
                           : "branch at line " + std::to_string(n.range.start.line + 1);
    inputs.push_back(what + ": " + formatDuration(n.estimate.dist.mean_ns));
  }
  void noteUnknown(Derivation& d) const {
    if (!negligible.empty()) {
      std::string list;
      for (size_t i = 0; i < negligible.size() && i < 5; ++i)
        list += (i ? ", " : "") + negligible[i];
      if (negligible.size() > 5) list += ", …";
      d.assumptions.push_back(
          "taken as negligible (no production data; their bodies make no "
          "calls and have no loops): " +
          list);
    }
    if (unknown.empty()) return;
    std::string list;
    for (size_t i = 0; i < unknown.size() && i < 5; ++i) list += (i ? ", " : "") + unknown[i];
    if (unknown.size() > 5) list += ", …";
    d.assumptions.push_back(std::to_string(unknown.size()) +
                            " part(s) without data not counted: " + list);
  }
  // Nothing but negligible parts: the whole is negligible too (a "leaf"), not unknown.
  bool onlyNegligible() const { return !any_known && unknown.empty() && !negligible.empty(); }
};

// The estimate of a part made only of bodies without calls or loops: negligible, stated, and
// shown as "no data" rather than as a figure of 0.
Estimate negligibleEstimate(const std::string& what) {
  Estimate e;
  e.derivation.model = "leaf";
  e.derivation.summary = "no production data; makes no calls and has no loops: negligible";
  e.derivation.assumptions.push_back("no production data for " + what +
                                     "; it makes no calls and has no loops of unknown count, so "
                                     "its cost is taken as negligible");
  return e;
}

}  // namespace

void Inference::assignIterations(Node& node, FunctionInfo& fn, const MatchResult& self) {
  node.iterations.reset();
  node.fill_sites.clear();
  if (self.item)
    for (const auto& l : self.item->loops)
      if (l.ordinal == node.loop_ordinal && l.iterations_mean > 0) {
        node.iterations = l.iterations_mean;
        node.iteration_source = IterationSource::Production;
        node.iteration_note = "production loop data (" + std::to_string(l.count) + " executions)";
        return;
      }
  if (!node.producer_key.empty()) {
    MatchResult producer = matcher_.match(node.producer_key, node.producer_mangled);
    if (producer.item && producer.item->result_size && producer.item->result_size->mean > 0) {
      node.iterations = producer.item->result_size->mean;
      node.iteration_source = IterationSource::ProducerSize;
      node.iteration_note = "recorded result size of " + node.producer_key;
      return;
    }
  }
  if (node.constant_trip) {
    node.iterations = *node.constant_trip;
    node.iteration_source = IterationSource::ConstantTrip;
    node.iteration_note = "constant trip count";
    return;
  }
  if (node.annotated_iterations) {
    node.iterations = *node.annotated_iterations;
    node.iteration_source = IterationSource::Annotation;
    node.iteration_note = "developer estimate (perfhat: iterations)";
    return;
  }
  // A local container the function fills itself holds at most as many elements as it inserts
  // before the loop: the insertions' executions per call, from the counts of their own loops.
  if (!node.range_var.empty()) {
    double inserted = 0;
    for (const Node& c : fn.nodes) {
      if (c.id >= node.id || c.kind != NodeKind::Call || c.fills_var != node.range_var) continue;
      const double k = product(executionFactors(fn, c), false);
      node.fill_sites.emplace_back(c.id, k);
      inserted += k;
    }
    if (inserted > 0) {
      node.iterations = inserted;
      node.iteration_source = IterationSource::DataFlow;
      node.iteration_note = "at most the " + fmtNumber(inserted) + " insertion(s) into " +
                            node.range_var_name + " above";
      return;
    }
  }
  node.iterations = options_.default_loop_iterations;
  node.iteration_source = IterationSource::Default;
  node.iteration_note = "default";
}

Estimate Inference::inferLoop(Node& node, const FunctionInfo& fn) {
  std::vector<std::string> assumptions;
  const std::string& iteration_note = node.iteration_note;
  if (node.iteration_source == IterationSource::Annotation)
    assumptions.push_back("iterations estimated by the developer");
  if (node.iteration_source == IterationSource::DataFlow) {
    bool assumed = false;
    for (const auto& [id, k] : node.fill_sites)
      for (const CostFactor& f : executionFactors(fn, fn.nodes[id])) assumed |= f.assumed;
    assumptions.push_back("iterations bounded by the insertions into " + node.range_var_name +
                          (assumed ? " (their own count rests on assumptions)" : "") +
                          ": an upper bound when it drops duplicates");
  }
  if (node.iteration_source == IterationSource::Default)
    assumptions.push_back("default " + fmtNumber(options_.default_loop_iterations) +
                          " iterations: no loop data, producer size, trip count or annotation");
  double n = *node.iterations;
  Sum once, body;
  for (int c : node.children) {
    const Node& child = fn.nodes[c];
    (child.arm == -1 ? once : body).add(child);
  }
  Estimate e;
  e.derivation.model = "loop";
  e.derivation.inputs.push_back("iterations " + fmtNumber(n) + " (" + iteration_note + ")");
  e.derivation.assumptions = assumptions;
  body.noteUnknown(e.derivation);
  once.noteUnknown(e.derivation);
  const bool assumed_count = node.iteration_source == IterationSource::Default;
  if (body.onlyNegligible() && !once.any_known && once.unknown.empty() && !assumed_count)
    return negligibleEstimate("this loop");
  if (body.onlyNegligible() && once.any_known) {
    // A body of negligible parts: the loop costs what runs once (the range expression, the
    // init); with an assumed count the iterations are an unknown part.
    e.provenance = Provenance::Inferred;
    e.dist = once.dist;
    e.floor_mean_ns = once.floor;
    e.unknown_parts = once.unknown_parts + (assumed_count ? 1 : 0);
    e.derivation.summary = fmtNumber(n) + " × negligible";
    for (auto& i : once.inputs) e.derivation.inputs.push_back("once: " + i);
    return e;
  }
  if (!body.any_known) {
    e.derivation.summary = fmtNumber(n) + " × ?";
    return e;  // nothing known about an iteration: Unknown, not 0
  }
  e.dist = scaleDist(body.dist, n);
  if (once.any_known) e.dist = addDist(e.dist, once.dist);
  e.dist.samples = body.dist.samples;
  e.floor_mean_ns = (assumed_count ? 0 : n * body.floor) + once.floor;
  e.unknown_parts = body.unknown_parts + once.unknown_parts;
  bool measured = node.iteration_source == IterationSource::Production && body.all_measured &&
                  once.all_measured;
  e.provenance = measured ? Provenance::Measured : Provenance::Inferred;
  e.derivation.summary = fmtNumber(n) + " × " + formatDuration(body.dist.mean_ns);
  for (auto& i : body.inputs) e.derivation.inputs.push_back("per iteration: " + i);
  for (auto& i : once.inputs) e.derivation.inputs.push_back("once: " + i);
  if (n > 1) e.derivation.assumptions.push_back("percentiles scaled by the iteration count");
  return e;
}

std::vector<CostFactor> Inference::executionFactors(const FunctionInfo& fn, const Node& n) const {
  std::vector<CostFactor> out;  // innermost first until reversed
  for (const Node* cur = &n; cur->parent >= 0; cur = &fn.nodes[cur->parent]) {
    const Node& p = fn.nodes[cur->parent];
    // A loop's range expression / init runs as often as the loop itself: same block as p.
    const bool own_block = !(p.kind == NodeKind::Loop && cur->arm == -1);
    if (own_block) {
      // A measured call in the same block runs exactly as often: its production call count
      // per call of the function is the block's execution count.
      bool found = false;
      for (int c : p.children) {
        const Node& s = fn.nodes[c];
        if (s.id == cur->id || s.arm != cur->arm || s.production_calls <= 0) continue;
        const double k = s.production_calls;
        out.push_back({CostFactor::Kind::ProductionCalls, k, s.id, false, k, k});
        found = true;
        break;
      }
      if (found) break;
    }
    if (p.kind == NodeKind::Loop && cur->arm != -1 && p.iterations) {
      const double v = *p.iterations;
      CostFactor f{CostFactor::Kind::Iterations,
                   v,
                   p.id,
                   p.iteration_source == IterationSource::Default ||
                       p.iteration_source == IterationSource::None,
                   v,
                   v};
      if (f.assumed) {
        f.lo = v * options_.default_iterations_low;
        f.hi = v * options_.default_iterations_high;
      } else if (p.iteration_source == IterationSource::DataFlow) {
        f.lo = v * options_.dataflow_low;
      } else if (p.iteration_source == IterationSource::ProducerSize) {
        // The recorded mean over every caller; this one's collections may be as large as the
        // p90, or as much below the mean as the p90 is above it.
        MatchResult producer = matcher_.match(p.producer_key, p.producer_mangled);
        if (producer.item && producer.item->result_size && producer.item->result_size->p90 > v) {
          f.hi = producer.item->result_size->p90;
          f.lo = v * v / f.hi;
        }
      }
      out.push_back(f);
    } else if (p.kind == NodeKind::Branch && cur->arm >= 0 && p.armProbability(cur->arm)) {
      // Branch weights come from priors or equal arms (the data has no branch counts).
      const double v = *p.armProbability(cur->arm);
      if (p.branch_measured)
        out.push_back({CostFactor::Kind::Branch, v, p.id, false, v, v});
      else
        out.push_back({CostFactor::Kind::Branch, v, p.id, true, v * options_.branch_prior_low,
                       std::min(1.0, v * options_.branch_prior_high)});
    }
  }
  std::reverse(out.begin(), out.end());
  return out;
}

Estimate Inference::inferBranch(Node& node, const FunctionInfo& fn) {
  int arms = std::max(node.branch_arms, 1);
  Sum cond;
  std::vector<Sum> arm(arms);
  for (int c : node.children) {
    const Node& child = fn.nodes[c];
    if (child.arm < 0 || child.arm >= arms)
      cond.add(child);
    else
      arm[child.arm].add(child);
  }
  // Set before anything can return: continue-guards and the function total use it even when
  // nothing inside the branch is known.
  // Without branch counts in the data (the feedback contract has none), a two-arm branch uses
  // the static prior the AST builder derived from the code as written, if any; else equal arms.
  // The worst case ignores priors: every arm may be the one taken.
  // Production shows the share where an arm begins with a call it measured from this function:
  // that call's count per call of the function over the branch's own executions (known from
  // data alone), which replaces the prior.
  node.branch_measured = false;
  node.branch_evidence = -1;
  if (options_.branch_mode != BranchMode::Worst && arms == 2) {
    const std::vector<CostFactor> runs = executionFactors(fn, node);
    const bool data =
        std::none_of(runs.begin(), runs.end(), [](const CostFactor& f) { return f.assumed; });
    const double executions = product(runs, false);
    for (int c : node.children) {
      const Node& child = fn.nodes[c];
      if (!data || executions <= 0 || child.kind != NodeKind::Call || child.arm < 0 ||
          child.arm > 1 || child.production_calls <= 0)
        continue;
      const double p = std::clamp(child.production_calls / executions, 0.0, 1.0);
      node.arm_probabilities =
          child.arm == 0 ? std::vector<double>{p, 1 - p} : std::vector<double>{1 - p, p};
      node.branch_measured = true;
      node.branch_evidence = child.id;
      break;
    }
  }
  const bool prior = !node.branch_measured && options_.branch_mode != BranchMode::Worst &&
                     arms == 2 && node.branch_prior;
  if (!node.branch_measured) node.arm_probabilities.clear();
  if (prior) node.arm_probabilities = {*node.branch_prior, 1 - *node.branch_prior};
  node.branch_probability = options_.branch_mode == BranchMode::Worst ? 1.0
                            : node.branch_measured                    ? node.arm_probabilities[0]
                            : prior                                   ? *node.branch_prior
                                                                      : 1.0 / arms;
  Estimate e;
  e.derivation.model = "branch";
  bool any = cond.any_known;
  for (auto& a : arm) any |= a.any_known;
  for (auto& a : arm) a.noteUnknown(e.derivation);
  cond.noteUnknown(e.derivation);
  if (!any) {
    bool negligible = cond.unknown.empty();
    for (auto& a : arm) negligible &= a.unknown.empty();
    bool some = !cond.negligible.empty();
    for (auto& a : arm) some |= !a.negligible.empty();
    if (negligible && some) return negligibleEstimate("this branch");
    e.derivation.summary = "?";
    return e;
  }
  // The cheapest arm is the part that runs whichever way the branch goes.
  double cheapest = arm.empty() ? 0 : arm[0].floor;
  for (auto& a : arm) cheapest = std::min(cheapest, a.floor);
  e.floor_mean_ns = cond.floor + cheapest;
  e.unknown_parts = cond.unknown_parts;
  for (auto& a : arm) e.unknown_parts += a.unknown_parts;
  Distribution d = cond.dist;
  if (options_.branch_mode == BranchMode::Worst) {
    const Sum* worst = nullptr;
    for (auto& a : arm)
      if (a.any_known && (!worst || a.dist.mean_ns > worst->dist.mean_ns)) worst = &a;
    if (worst) d = addDist(d, worst->dist);
    node.branch_probability = 1.0;
    e.derivation.summary = "worst arm " + formatDuration(worst ? worst->dist.mean_ns : 0);
    e.derivation.assumptions.push_back("worst case: the most expensive arm is taken");
  } else if (node.branch_measured) {
    for (int i = 0; i < arms; ++i)
      if (arm[i].any_known) d = addDist(d, scaleDist(arm[i].dist, node.arm_probabilities[i]));
    const std::string p0 = fmtNumber(node.arm_probabilities[0]);
    const std::string p1 = fmtNumber(node.arm_probabilities[1]);
    e.derivation.summary = "arms weighted " + p0 + " / " + p1 + " (production)";
    e.derivation.inputs.push_back(
        "branch data from production: " + displayName(fn.nodes[node.branch_evidence]) + " ran " +
        fmtNumber(fn.nodes[node.branch_evidence].production_calls) + "× per call of " + fn.name +
        "() at the top of arm " + std::to_string(fn.nodes[node.branch_evidence].arm));
  } else if (prior) {
    for (int i = 0; i < arms; ++i)
      if (arm[i].any_known) d = addDist(d, scaleDist(arm[i].dist, node.arm_probabilities[i]));
    const std::string p0 = fmtNumber(node.arm_probabilities[0]);
    const std::string p1 = fmtNumber(node.arm_probabilities[1]);
    e.derivation.summary = "arms weighted " + p0 + " / " + p1;
    e.derivation.assumptions.push_back("no branch data: static prior (" + node.branch_prior_reason +
                                       "): taken p = " + p0 + ", not taken p = " + p1);
  } else {
    double p = 1.0 / arms;
    for (auto& a : arm)
      if (a.any_known) d = addDist(d, scaleDist(a.dist, p));
    e.derivation.summary = "arms weighted " + fmtNumber(p) + " each";
    e.derivation.assumptions.push_back("no branch data: " + std::to_string(arms) +
                                       " arms assumed equally likely (p = " + fmtNumber(p) + ")");
  }
  for (size_t i = 0; i < arm.size(); ++i)
    for (auto& in : arm[i].inputs)
      e.derivation.inputs.push_back("arm " + std::to_string(i) + ": " + in);
  for (auto& in : cond.inputs) e.derivation.inputs.push_back("condition: " + in);
  e.dist = d;
  e.provenance = Provenance::Inferred;
  return e;
}

namespace {

// Where each node sits, as a path of what encloses it: kind, callee or loop source, and the arm
// of its parent. Two versions of a function share a node exactly when they share its path, so a
// call moved into a loop or behind a guard is one call gone and one call new.
std::vector<std::string> nodePaths(const FunctionInfo& f) {
  std::vector<std::string> path(f.nodes.size());
  for (const Node& n : f.nodes) {  // pre-order: a parent precedes its children
    std::string own;
    switch (n.kind) {
      case NodeKind::Function:
        own = "F";
        break;
      case NodeKind::Call:
        own = "C:" + (n.callee_key.empty() ? n.callee_name : n.callee_key);
        break;
      case NodeKind::Loop:
        own = "L" + std::to_string(static_cast<int>(n.loop_kind)) + ":" + n.producer_key + ":" +
              n.range_var_name;
        break;
      case NodeKind::Branch:
        own = "B" + std::to_string(n.branch_arms);
        break;
    }
    own += "@" + std::to_string(n.arm);
    path[n.id] = n.parent >= 0 && n.parent < n.id ? path[n.parent] + "/" + own : own;
  }
  return path;
}

Distribution subtractDist(const Distribution& a, const Distribution& b) {
  Distribution d = a;
  d.mean_ns = std::max(0.0, a.mean_ns - b.mean_ns);
  d.p50_ns = std::max(0.0, a.p50_ns - b.p50_ns);
  d.p90_ns = std::max(0.0, a.p90_ns - b.p90_ns);
  d.p99_ns = std::max(0.0, a.p99_ns - b.p99_ns);
  return d;
}

}  // namespace

Estimate::Interval Inference::intervalOf(const Node& root,
                                         const std::vector<AddedCost>& costs) const {
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
  return {lo, hi};
}

void Inference::diffAgainstDeployed(FunctionInfo& fn, const FunctionInfo& deployed) {
  // The deployed body with production data attached: what each of its calls cost there.
  analysing_deployed_ = true;
  FunctionInfo old = analyzeFunction(deployed);
  analysing_deployed_ = false;
  in_progress_.insert(fn.key);  // the nested analysis of the same key released it

  const std::vector<std::string> now_path = nodePaths(fn), old_path = nodePaths(old);
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
      if (!isLeaf(n.estimate) && !n.callee_system) ++unknown_new;
      continue;
    }
    if (n.estimate.dist.mean_ns <= 0) continue;
    AddedCost a;
    a.status = AddedCost::Status::New;
    a.node = n.id;
    a.per_execution = n.estimate.dist;
    a.factors = executionFactors(fn, n);
    a.executions = product(a.factors, false);
    a.total = scaleDist(a.per_execution, a.executions);
    setRange(a, n.estimate);
    a.floor_ns = n.estimate.floor_mean_ns * product(a.factors, true);
    fn.added.push_back(std::move(a));
  }
  for (const Node& o : old.nodes) {
    if (o.kind != NodeKind::Call || kept[o.id]) continue;
    if (!o.estimate.known() || o.estimate.dist.mean_ns <= 0) continue;
    AddedCost a;
    a.status = AddedCost::Status::Removed;
    a.removed_name = displayName(o);
    a.removed_line = o.range.start.line;
    a.per_execution = o.estimate.dist;
    // Production counted this very call: its count per call of the function is what goes away.
    if (o.production_calls > 0)
      a.factors = {{CostFactor::Kind::ProductionCalls, o.production_calls, -1, false,
                    o.production_calls, o.production_calls}};
    else
      a.factors = executionFactors(old, o);
    for (CostFactor& f : a.factors) f.from = -1;  // nodes of the deployed text
    a.executions = product(a.factors, false);
    a.total = scaleDist(a.per_execution, a.executions);
    setRange(a, o.estimate);
    a.floor_ns = o.estimate.floor_mean_ns * product(a.factors, true);
    fn.added.push_back(std::move(a));
  }
  if (fn.added.empty() && unknown_new == 0) return;

  Node& root = fn.nodes[0];
  Distribution added, removed;
  std::vector<std::string> inputs;
  for (const AddedCost& a : fn.added) {
    std::string path;
    for (const CostFactor& f : a.factors) path += fmtNumber(f.value) + " × ";
    if (a.status == AddedCost::Status::Removed) {
      removed = addDist(removed, a.total);
      inputs.push_back("removed call " + a.removed_name + ": −" + path +
                       formatDuration(a.per_execution.mean_ns));
    } else {
      added = addDist(added, a.total);
      inputs.push_back("new call " + displayName(fn.nodes[a.node]) + ": " + path +
                       formatDuration(a.per_execution.mean_ns));
    }
  }
  fn.changed = true;
  Estimate e;
  e.provenance = Provenance::Inferred;
  const Distribution& m = root.estimate.dist;
  e.dist = subtractDist(addDist(m, added), removed);
  e.dist.samples = m.samples;
  e.interval = intervalOf(root, fn.added);
  e.floor_mean_ns = e.dist.mean_ns;
  e.unknown_parts = unknown_new;
  e.derivation.model = "diff";
  e.derivation.summary = "measured " + formatDuration(m.mean_ns) + " − removed " +
                         formatDuration(removed.mean_ns) + " + new " +
                         formatDuration(added.mean_ns);
  e.derivation.inputs.push_back("measured total: " + formatDuration(m.mean_ns));
  for (auto& i : inputs) e.derivation.inputs.push_back(i);
  e.derivation.assumptions = root.estimate.derivation.assumptions;
  e.derivation.assumptions.push_back("compared with the body production ran (revision " +
                                     deployed_revision_ + ")");
  if (m.mean_ns + added.mean_ns < removed.mean_ns)
    e.derivation.assumptions.push_back(
        "the removed calls cost more than the measured total: the prediction is clamped at 0");
  if (unknown_new > 0)
    e.derivation.assumptions.push_back(std::to_string(unknown_new) +
                                       " new call(s) without data not counted");
  root.estimate = e;
}

FunctionInfo Inference::analyzeFunction(const FunctionInfo& input) {
  in_progress_.insert(input.key);
  FunctionInfo fn = input;
  MatchResult self = matcher_.matchDefinition(fn);
  Node& root = fn.nodes[0];
  fn.match = self ? self.how : "";
  for (const FeedbackItem* part : self.parts) fn.matched.push_back({part->key, part->stats});
  if (self) attach(root, *self.item);
  bool function_measured = self && self.item->stats.has_value();
  if (function_measured) {
    root.estimate.provenance = Provenance::Measured;
    root.estimate.dist = fromStats(*self.item->stats);
    root.estimate.floor_mean_ns = root.estimate.dist.mean_ns;
    root.estimate.derivation.model = "measured";
    root.estimate.derivation.summary =
        "production: mean " + formatDuration(root.estimate.dist.mean_ns);
    if (self.how == "overloads")
      root.estimate.derivation.assumptions.push_back(
          "aggregated across overloads / instantiations of " + qualifiedName(fn.key));
  }

  // Outside-in (BFS): attach data; what has none goes on the stack.
  std::vector<MatchResult> callee(fn.nodes.size());
  std::unordered_map<std::string, const CallSiteStats*> measured_site;  // by callee key
  std::unordered_map<std::string, int> calls_of;
  for (const Node& n : fn.nodes)
    if (n.kind == NodeKind::Call) ++calls_of[n.callee_key];
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
        const FeedbackItem* item = callee[id].item;
        if (item) attach(n, *item);
        const CallSiteStats* site = item ? callSiteFrom(*item, fn, caller_cache_) : nullptr;
        if (site) {
          n.estimate.provenance = Provenance::Measured;
          n.estimate.dist = fromCallSite(*site);
          n.estimate.floor_mean_ns = n.estimate.dist.mean_ns;
          setSpread(n.estimate, relativeError(site->mean_ns, site->p50_ns, site->p90_ns,
                                              site->count, options_.interval_z));
          n.estimate.derivation.model = "measured";
          n.estimate.derivation.summary =
              "production call site " + fn.name + "() → " + displayName(n);
          // Only data of this very callee counts its calls: a site matched across overloads
          // (`operator<<` for another argument type) counts the other overloads' calls.
          if (function_measured && calls_of[n.callee_key] == 1 && callee[id].how != "overloads")
            n.production_calls = site->calls_per_parent;
          measured_site[n.callee_key] = site;
        } else if (item && item->stats && item->callsites.empty()) {
          // The data does not record call sites, so this call cannot be told apart from an
          // existing one: the callee's own distribution is its measurement.
          n.estimate.provenance = Provenance::Measured;
          n.estimate.dist = fromStats(*item->stats);
          n.estimate.floor_mean_ns = n.estimate.dist.mean_ns;
          setSpread(n.estimate,
                    relativeError(item->stats->mean_ns, item->stats->p50_ns, item->stats->p90_ns,
                                  item->stats->count, options_.interval_z));
          n.estimate.derivation.model = "measured";
          n.estimate.derivation.summary =
              "production: " + displayName(n) + " mean " + formatDuration(item->stats->mean_ns);
        } else {
          to_infer.push_back(id);
        }
        if (n.estimate.known() && callee[id].how == "overloads")
          n.estimate.derivation.assumptions.push_back("aggregated across overloads of " +
                                                      qualifiedName(n.callee_key));
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
        e.derivation.model = "sum";
        s.noteUnknown(e.derivation);
        if (fn.unresolved_calls == 0 && (n.children.empty() || s.onlyNegligible())) {
          // A body with no calls, loops or branches (an accessor, arithmetic), or calling only
          // such bodies, does only CPU work on data it already has: negligible next to the
          // calls production measures. It stays without a figure ("no data", never "0 ns"),
          // and callers take it as negligible, stated in their hovers.
          e = negligibleEstimate(fn.name + "()");
        } else if (s.any_known) {
          e.provenance = Provenance::Inferred;
          e.dist = s.dist;
          e.floor_mean_ns = s.floor;
          e.unknown_parts = s.unknown_parts;
          e.derivation.summary = "Σ " + std::to_string(s.inputs.size()) +
                                 " part(s) = " + formatDuration(s.dist.mean_ns);
          e.derivation.inputs = s.inputs;
          e.derivation.assumptions.push_back("no production data for " + fn.name +
                                             "(): the sum of its parts");
        } else {
          e.derivation.summary = "no production data and nothing known inside";
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
    AddedCost a;
    a.node = n.id;
    a.per_execution = n.estimate.dist;
    a.factors = executionFactors(fn, n);
    a.executions = product(a.factors, false);
    a.total = scaleDist(a.per_execution, a.executions);
    setRange(a, n.estimate);
    a.floor_ns = n.estimate.floor_mean_ns * product(a.factors, true);
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
      const std::vector<CostFactor> f = executionFactors(fn, n);
      expected += product(f, false);
      expected_data += product(f, true);
      any = &n;
    }
    // Beyond counting noise: half again as many, and at least one more every other call.
    auto beyond = [&](double count) {
      return count >= 1.5 * site->calls_per_parent && count - site->calls_per_parent >= 0.5;
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
  std::vector<std::string> new_inputs, possibly_new;
  for (const AddedCost& a : fn.added) {
    const Node& n = fn.nodes[a.node];
    std::string path;
    for (const CostFactor& f : a.factors) path += fmtNumber(f.value) + " × ";
    std::string text = (a.factors.size() == 1 && a.factors[0].kind == CostFactor::Kind::ExtraCalls
                            ? "more calls of " + displayName(n) + ": "
                            : "new call " + displayName(n) + ": ") +
                       path + formatDuration(a.per_execution.mean_ns);
    if (a.status == AddedCost::Status::PossiblyNew) {
      possibly_new.push_back(text + " (possibly new: " + formatDuration(a.floor_ns) +
                             " backed by data fits in the " + formatDuration(a.room_ns) +
                             " production does not attribute to measured calls)");
      continue;
    }
    added = any_new ? addDist(added, a.total) : a.total;
    any_new = true;
    new_inputs.push_back(text);
  }
  if (any_new) {
    fn.changed = true;
    Estimate e;
    e.provenance = Provenance::Inferred;
    e.dist = addDist(root.estimate.dist, added);
    e.dist.samples = root.estimate.dist.samples;
    e.interval = intervalOf(root, fn.added);
    e.floor_mean_ns = root.estimate.dist.mean_ns;
    e.derivation.model = "sum";
    e.derivation.summary = "measured " + formatDuration(root.estimate.dist.mean_ns) + " + new " +
                           formatDuration(added.mean_ns);
    e.derivation.inputs.push_back("measured total: " + formatDuration(root.estimate.dist.mean_ns));
    for (auto& i : new_inputs) e.derivation.inputs.push_back(i);
    e.derivation.assumptions = root.estimate.derivation.assumptions;
    e.derivation.assumptions.push_back("new calls add to the measured total");
    for (auto& i : possibly_new) e.derivation.assumptions.push_back("not counted: " + i);
    root.estimate = e;
  } else {
    for (auto& i : possibly_new)
      root.estimate.derivation.assumptions.push_back("not counted: " + i);
  }
  in_progress_.erase(input.key);
  return fn;
}

}  // namespace perfhat::analysis
