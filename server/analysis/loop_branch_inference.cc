// Loops (iteration sources, iterations × body) and branches (production shares, static priors,
// equal arms or the worst arm), and how often a node runs per call of its function.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <deque>
#include <vector>

#include "common/function_key.h"
#include "server/analysis/inference_parts.h"

namespace perfhat::analysis {

using namespace inference_detail;  // NOLINT(google-build-using-namespace): the units of one class

namespace {

// Whether node `outer` is `n` or one of its ancestors.
bool encloses(const FunctionInfo& fn, int outer, const Node& n) {
  for (int up = n.id; up >= 0; up = fn.nodes[up].parent)
    if (up == outer) return true;
  return false;
}

}  // namespace

void Inference::assignIterations(Node& node, FunctionInfo& fn, const MatchResult& self) {
  node.loop.iterations.reset();
  node.loop.executions = 0;
  node.loop.fill_sites.clear();
  if (self.item)
    for (const auto& l : self.item->loops)
      if (l.ordinal == node.loop.ordinal && l.iterations_mean > 0) {
        node.loop.iterations = l.iterations_mean;
        node.loop.iteration_source = IterationSource::Production;
        node.loop.executions = l.count;
        return;
      }
  if (!node.loop.producer_key.empty()) {
    MatchResult producer = matcher_.match(node.loop.producer_key, node.loop.producer_mangled);
    if (producer.item && producer.item->result_size && producer.item->result_size->mean > 0) {
      node.loop.iterations = producer.item->result_size->mean;
      node.loop.iteration_source = IterationSource::ProducerSize;
      return;
    }
  }
  if (node.loop.constant_trip) {
    node.loop.iterations = *node.loop.constant_trip;
    node.loop.iteration_source = IterationSource::ConstantTrip;
    return;
  }
  if (node.loop.annotated_iterations) {
    node.loop.iterations = *node.loop.annotated_iterations;
    node.loop.iteration_source = IterationSource::Annotation;
    return;
  }
  // A local container the function fills itself holds at most as many elements as it inserts
  // before the loop: the insertions' executions per call, from the counts of their own loops
  // and the shares of the branches around them (weighed now: branches get their weights in the
  // inside-out pass, after every loop has its count).
  if (!node.loop.range_var.empty()) {
    double inserted = 0;
    for (const Node& c : fn.nodes) {
      if (c.id >= node.id || c.kind != NodeKind::Call || c.call.fills_var != node.loop.range_var)
        continue;
      // Up to what encloses the loop too: a branch around both decides whether either runs.
      for (int up = c.parent; up > 0 && !encloses(fn, up, node); up = fn.nodes[up].parent)
        if (fn.nodes[up].kind == NodeKind::Branch) weighArms(fn.nodes[up], fn);
      const double k = product(executionFactors(fn, c), false);
      node.loop.fill_sites.emplace_back(c.id, k);
      inserted += k;
    }
    if (inserted > 0) {
      node.loop.iterations = inserted;
      node.loop.iteration_source = IterationSource::DataFlow;
      return;
    }
  }
  node.loop.iterations = options_.default_loop_iterations;
  node.loop.iteration_source = IterationSource::Default;
}

Estimate Inference::inferLoop(Node& node, const FunctionInfo& fn) {
  std::vector<fact::Assumption> assumptions;
  if (node.loop.iteration_source == IterationSource::Annotation)
    assumptions.push_back(fact::DeveloperIterations{});
  if (node.loop.iteration_source == IterationSource::DataFlow) {
    bool assumed = false;
    for (const auto& [id, k] : node.loop.fill_sites)
      for (const CostFactor& f : executionFactors(fn, fn.nodes[id])) assumed |= f.assumed;
    assumptions.push_back(fact::InsertionBound{node.loop.range_var_name, assumed});
  }
  if (node.loop.iteration_source == IterationSource::Default)
    assumptions.push_back(fact::DefaultIterations{options_.default_loop_iterations});
  double n = *node.loop.iterations;
  Sum once, body;
  for (int c : node.children) {
    const Node& child = fn.nodes[c];
    (child.arm == -1 ? once : body).add(child);
  }
  Estimate e;
  e.derivation.model = Model::Loop;
  e.derivation.inputs.push_back(
      {{},
       fact::Iterations{n, node.loop.iteration_source, node.loop.executions, node.loop.producer_key,
                        node.loop.range_var_name}});
  e.derivation.assumptions = assumptions;
  body.noteUnknown(e.derivation);
  once.noteUnknown(e.derivation);
  const bool assumed_count = node.loop.iteration_source == IterationSource::Default;
  if (body.onlyNegligible() && !once.any_known && once.unknown.empty() && !assumed_count)
    return negligibleEstimate(NodeKind::Loop);
  if (body.onlyNegligible() && once.any_known) {
    // A body of negligible parts: the loop costs what runs once (the range expression, the
    // init); with an assumed count the iterations are an unknown part.
    e.provenance = Provenance::Inferred;
    e.dist = once.dist;
    e.floor_mean_ns = once.floor;
    e.unknown_parts = once.unknown_parts + (assumed_count ? 1 : 0);
    e.derivation.summary = fact::LoopProduct{n, fact::LoopProduct::Body::Negligible, 0};
    once.addInputs(e.derivation, {fact::Scope::Once});
    return e;
  }
  if (!body.any_known) {
    e.derivation.summary = fact::LoopProduct{n, fact::LoopProduct::Body::Unknown, 0};
    return e;  // nothing known about an iteration: Unknown, not 0
  }
  e.dist = scaleDist(body.dist, n);
  if (once.any_known) e.dist = addDist(e.dist, once.dist);
  e.dist.samples = body.dist.samples;
  e.floor_mean_ns = (assumed_count ? 0 : n * body.floor) + once.floor;
  e.unknown_parts = body.unknown_parts + once.unknown_parts;
  bool measured = node.loop.iteration_source == IterationSource::Production && body.all_measured &&
                  once.all_measured;
  e.provenance = measured ? Provenance::Measured : Provenance::Inferred;
  e.derivation.summary = fact::LoopProduct{n, fact::LoopProduct::Body::Known, body.dist.mean_ns};
  body.addInputs(e.derivation, {fact::Scope::PerIteration});
  once.addInputs(e.derivation, {fact::Scope::Once});
  if (n > 1) e.derivation.assumptions.push_back(fact::PercentilesScaled{});
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
        if (s.id == cur->id || s.arm != cur->arm || s.call.production_calls <= 0) continue;
        const double k = s.call.production_calls;
        out.push_back({CostFactor::Kind::ProductionCalls, k, s.id, false, k, k});
        found = true;
        break;
      }
      if (found) break;
    }
    if (p.kind == NodeKind::Loop && cur->arm != -1 && p.loop.iterations) {
      const double v = *p.loop.iterations;
      CostFactor f{CostFactor::Kind::Iterations,
                   v,
                   p.id,
                   p.loop.iteration_source == IterationSource::Default ||
                       p.loop.iteration_source == IterationSource::None,
                   v,
                   v};
      if (f.assumed) {
        f.lo = v * options_.default_iterations_low;
        f.hi = v * options_.default_iterations_high;
      } else if (p.loop.iteration_source == IterationSource::DataFlow) {
        f.lo = v * options_.dataflow_low;
      } else if (p.loop.iteration_source == IterationSource::ProducerSize) {
        // The recorded mean over every caller; this one's collections may be as large as the
        // p90, or as much below the mean as the p90 is above it.
        MatchResult producer = matcher_.match(p.loop.producer_key, p.loop.producer_mangled);
        if (producer.item && producer.item->result_size && producer.item->result_size->p90 > v) {
          f.hi = producer.item->result_size->p90;
          f.lo = v * v / f.hi;
        }
      }
      out.push_back(f);
    } else if (p.kind == NodeKind::Branch && cur->arm >= 0 && p.branch.armProbability(cur->arm)) {
      // Branch weights come from priors or equal arms (the data has no branch counts).
      const double v = *p.branch.armProbability(cur->arm);
      if (p.branch.measured)
        out.push_back({CostFactor::Kind::Branch, v, p.id, false, v, v});
      else
        out.push_back({CostFactor::Kind::Branch, v, p.id, true, v * options_.branch_prior_low,
                       std::min(1.0, v * options_.branch_prior_high)});
    }
  }
  std::reverse(out.begin(), out.end());
  return out;
}

void Inference::weighArms(Node& node, const FunctionInfo& fn) const {
  const int arms = std::max(node.branch.arms, 1);
  // Without branch counts in the data (the feedback contract has none), a two-arm branch uses
  // the static prior the AST builder derived from the code as written, if any; else equal arms.
  // The worst case ignores priors: every arm may be the one taken.
  // Production shows the share where an arm begins with a call it measured from this function:
  // that call's count per call of the function over the branch's own executions (known from
  // data alone), which replaces the prior.
  node.branch.measured = false;
  node.branch.evidence = -1;
  if (options_.branch_mode != BranchMode::Worst && arms == 2) {
    const std::vector<CostFactor> runs = executionFactors(fn, node);
    const bool data =
        std::none_of(runs.begin(), runs.end(), [](const CostFactor& f) { return f.assumed; });
    const double executions = product(runs, false);
    for (int c : node.children) {
      const Node& child = fn.nodes[c];
      if (!data || executions <= 0 || child.kind != NodeKind::Call || child.arm < 0 ||
          child.arm > 1 || child.call.production_calls <= 0)
        continue;
      const double p = std::clamp(child.call.production_calls / executions, 0.0, 1.0);
      node.branch.arm_probabilities =
          child.arm == 0 ? std::vector<double>{p, 1 - p} : std::vector<double>{1 - p, p};
      node.branch.measured = true;
      node.branch.evidence = child.id;
      break;
    }
  }
  const bool prior = !node.branch.measured && options_.branch_mode != BranchMode::Worst &&
                     arms == 2 && node.branch.prior;
  if (!node.branch.measured) node.branch.arm_probabilities.clear();
  if (prior) node.branch.arm_probabilities = {*node.branch.prior, 1 - *node.branch.prior};
  node.branch.probability = options_.branch_mode == BranchMode::Worst ? 1.0
                            : node.branch.measured ? node.branch.arm_probabilities[0]
                            : prior                ? *node.branch.prior
                                                   : 1.0 / arms;
}

Estimate Inference::inferBranch(Node& node, const FunctionInfo& fn) {
  int arms = std::max(node.branch.arms, 1);
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
  weighArms(node, fn);
  const bool prior = !node.branch.measured && options_.branch_mode != BranchMode::Worst &&
                     arms == 2 && node.branch.prior;
  Estimate e;
  e.derivation.model = Model::Branch;
  bool any = cond.any_known;
  for (auto& a : arm) any |= a.any_known;
  for (auto& a : arm) a.noteUnknown(e.derivation);
  cond.noteUnknown(e.derivation);
  if (!any) {
    bool negligible = cond.unknown.empty();
    for (auto& a : arm) negligible &= a.unknown.empty();
    bool some = !cond.negligible.empty();
    for (auto& a : arm) some |= !a.negligible.empty();
    if (negligible && some) return negligibleEstimate(NodeKind::Branch);
    e.derivation.summary = fact::BranchUnknown{};
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
    node.branch.probability = 1.0;
    e.derivation.summary = fact::WorstArm{worst ? worst->dist.mean_ns : 0};
    e.derivation.assumptions.push_back(fact::WorstCase{});
  } else if (node.branch.measured) {
    for (int i = 0; i < arms; ++i)
      if (arm[i].any_known)
        d = addDist(d, scaleDist(arm[i].dist, node.branch.arm_probabilities[i]));
    e.derivation.summary = fact::ArmsWeighted{node.branch.arm_probabilities[0],
                                              node.branch.arm_probabilities[1], true};
    const Node& evidence = fn.nodes[node.branch.evidence];
    e.derivation.inputs.push_back(
        {{},
         fact::BranchEvidence{callName(evidence), evidence.call.production_calls, fn.name,
                              evidence.arm}});
  } else if (prior) {
    for (int i = 0; i < arms; ++i)
      if (arm[i].any_known)
        d = addDist(d, scaleDist(arm[i].dist, node.branch.arm_probabilities[i]));
    const double p0 = node.branch.arm_probabilities[0], p1 = node.branch.arm_probabilities[1];
    e.derivation.summary = fact::ArmsWeighted{p0, p1, false};
    e.derivation.assumptions.push_back(fact::StaticPrior{node.branch.prior_reason, p0, p1});
  } else {
    double p = 1.0 / arms;
    for (auto& a : arm)
      if (a.any_known) d = addDist(d, scaleDist(a.dist, p));
    e.derivation.summary = fact::ArmsEqual{p};
    e.derivation.assumptions.push_back(fact::EqualArms{arms, p});
  }
  for (size_t i = 0; i < arm.size(); ++i)
    arm[i].addInputs(e.derivation, {fact::Scope::Arm, static_cast<int>(i)});
  cond.addInputs(e.derivation, {fact::Scope::Condition});
  e.dist = d;
  e.provenance = Provenance::Inferred;
  return e;
}

}  // namespace perfhat::analysis
