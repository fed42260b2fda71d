// Pieces the inference's units share (inference.cc, callsite_inference.cc,
// loop_branch_inference.cc, deployed_diff.cc): not part of the analysis's interface.
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "server/analysis/inference.h"

namespace perfhat::analysis::inference_detail {

Distribution fromCallSite(const CallSiteStats& c);
// The relative half-width of a z-range around a mean measured over `count` calls: z·SE/mean, with
// σ from the spread as (p90 − p50) / 1.2816 (the normal p90 lies 1.2816 σ above the median).
double relativeError(double mean, double p50, double p90, uint64_t count, double z);
void setSpread(Estimate& e, double rel);
// The share by which a function's measured value may move between two runs of the same code:
// the configured drift, or the move between the baseline window and the current one when the
// feedback holds both and it is larger (at most 1).
double driftShare(const Node& root, const AnalysisOptions& options);
// Two outcomes in one production distribution (a lazily loaded or cached value: fast when
// loaded, slow when it loads), told apart by `ratio` between them. The slow outcome: the p90 when
// it is `ratio` × the p50 (the slow outcome is common), else the p99 (it is rare); 0 when neither
// shows one. The fast outcome: the p50 when the slow one is the tail, else the minimum when the
// p50 is `ratio` × above it (most calls load); 0 when the distribution shows one outcome.
double slowOutcome(const Stats& s, double ratio);
double fastOutcome(const Stats& s, double ratio);
// The outcome of a call that loads (the slow one of two): slowOutcome() when the slow outcome
// is the tail, else the p50 when most calls load (the minimum is the fast outcome); 0 when the
// distribution shows one outcome.
double loadingOutcome(const Stats& s, double ratio);
// What a call costs that finds its lazily loaded value already loaded (called again on the same
// object): 0 when a share of production's calls cost nothing measurable — a minimum of 0 with
// the mean below the median, which a latency distribution shows only when calls pile up at 0
// (a minimum of 0 alone may mean the data has none) — else fastOutcome(); nullopt when the
// distribution shows one outcome.
std::optional<double> loadedOutcome(const Stats& s, double ratio);
// The node whose every execution runs `n` once: the nearest loop `n` sits in the body of (a
// loop's range expression or init runs once per execution of the loop, so it belongs to the
// loop's own scope), or the function (0). With `certain`, -1 when a branch arm lies in between:
// `n` may not run.
int loopScope(const FunctionInfo& fn, const Node& n, bool certain);
// The range of one cost: its per-execution spread times its factors' ranges.
void setRange(AddedCost& a, const Estimate& per);
// The cost of a call that runs `factors` times per call of its function, at `per` each: its
// total, range and data-backed floor (DESIGN §10's consistency test); status New, no node.
AddedCost addedCost(const Estimate& per, std::vector<CostFactor> factors);
// How the derivation facts name call `n`.
fact::CallName callName(const Node& n);
void attach(Node& n, const FeedbackItem& item);
// The call site of `callee`'s data whose caller is `caller` (spelled as the runtime spelled it,
// normalized once per analysis through `cache`), or nullptr.
const CallSiteStats* callSiteFrom(const FeedbackItem& callee, const FunctionInfo& caller,
                                  std::unordered_map<std::string, std::string>& cache);
// `data_only`: the count a call can be held to when deciding whether it is new. An assumed loop
// count is unbounded guesswork and counts 0; a branch prior stays, because it is a probability
// (at most 1), the analysis's stated expectation for the arm, and the warning names it.
double product(const std::vector<CostFactor>& factors, bool data_only);
// The factors' values, outermost first (the derivation's "a × b × cost").
std::vector<double> factorValues(const AddedCost& a);
bool isLeaf(const Estimate& e);
// The estimate of a part made only of bodies without calls or loops: negligible, stated, and
// shown as "no data" rather than as a figure of 0.
Estimate negligibleEstimate(NodeKind kind, const std::string& function = "");
Distribution subtractDist(const Distribution& a, const Distribution& b);
// Where each node sits, as a path of what encloses it: kind, callee or loop source, and the arm
// of its parent. Two versions of a function share a node exactly when they share its path, so a
// call moved into a loop or behind a guard is one call gone and one call new. `other` is the
// version `f` is compared with: a loop over a local holding a producer's result is named by
// its producer alone when either version ranges over that producer's call directly.
std::vector<std::string> nodePaths(const FunctionInfo& f, const FunctionInfo& other);
// Per node of `now`: whether it is a call with a counterpart in `deployed` at the same place (the
// same path, paired in source order as the diff pairs them). Production's count of a call from
// this function describes the call where production ran it: a call at a new place (behind a new
// guard, in a new loop) runs as often as its new place says, not as its old one did.
std::vector<bool> callsAtDeployedPlace(const FunctionInfo& now, const FunctionInfo& deployed);

struct Sum {
  Distribution dist;
  bool any_known = false;
  bool all_measured = true;
  double floor = 0;
  int unknown_parts = 0;  // unknown children plus the unknown parts of known ones
  std::vector<fact::Input> inputs;
  std::vector<fact::CallName> unknown;  // calls by name, an empty name for a nested block
  std::vector<fact::CallName> negligible;
  void add(const Node& n) {
    if (isLeaf(n.estimate)) {  // no calls or loops: negligible (stated), not unknown
      negligible.push_back(callName(n));
      all_measured = false;
      return;
    }
    if (!n.estimate.known()) {
      unknown.push_back(n.kind == NodeKind::Call ? callName(n) : fact::CallName{});
      all_measured = false;
      ++unknown_parts;
      return;
    }
    dist = any_known ? addDist(dist, n.estimate.dist) : n.estimate.dist;
    any_known = true;
    floor += n.estimate.floor_mean_ns;
    unknown_parts += n.estimate.unknown_parts;
    if (n.estimate.provenance != Provenance::Measured) all_measured = false;
    inputs.push_back(
        {{},
         fact::PartCost{n.kind, n.kind == NodeKind::Call ? callName(n) : fact::CallName{},
                        n.range.start.line + 1, n.estimate.dist.mean_ns}});
  }
  void noteUnknown(Derivation& d) const {
    if (!negligible.empty()) d.assumptions.push_back(fact::NegligibleParts{negligible});
    if (!unknown.empty()) d.assumptions.push_back(fact::UnknownParts{unknown});
  }
  // This part's inputs, as seen from the node that holds it (`scope`), appended to `d`.
  void addInputs(Derivation& d, fact::Within scope) const {
    for (fact::Input in : inputs) {
      in.within.insert(in.within.begin(), scope);
      d.inputs.push_back(std::move(in));
    }
  }
  // Nothing but negligible parts: the whole is negligible too (a "leaf"), not unknown.
  bool onlyNegligible() const { return !any_known && unknown.empty() && !negligible.empty(); }
};

}  // namespace perfhat::analysis::inference_detail
