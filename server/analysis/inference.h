// Inference (paper Algorithm 1 + DESIGN §6): per function, visit the simplified AST outside-in
// (BFS) attaching production data through the specification; nodes without data go on a stack
// and are inferred inside-out, so loops, branches and the function total include what was
// inferred below them (propagation).
//
// Rules:
//  * call without call-site data: least-squares regression of the callee's latency over its
//    callers' workload (caller_rate_per_s, and caller_input_size when every site has it),
//    predicted for this parent's workload clamped to the observed range and shrunk toward the
//    sites' mean by the fit's adjusted R²; else the callee's overall distribution; callee
//    without any data but with a body in the workspace: that body, analysed recursively
//    (memoized, cycle-safe); otherwise Unknown;
//  * loop: once-evaluated parts + iterations × Σ body, iterations by preference production
//    loop data → producer's result size → constant trip count → annotation → default;
//  * branch: arms weighted equally (stated assumption) or the worst arm; `if (…) continue;` in a
//    loop body is a branch whose other arm is the rest of the body (ast_builder);
//  * function total: measured when matched, plus the cost of new (inferred) calls times their
//    executions per call — a measured call in the same block gives them (production calls per
//    parent), else the enclosing loops' iterations and branch weights — plus calls of an
//    already-called callee beyond what production counted (`changed`); else Σ children.
// Unknown stays Unknown: a sum counts its known parts and lists the unknown ones; a sum with no
// known part is Unknown, never 0.
#pragma once

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "server/analysis/ast_builder.h"
#include "server/analysis/matching.h"

namespace perfhat::analysis {

namespace inference_detail {
struct SiteRegression;
}

class Inference {
 public:
  // `deployed`: the same file as production ran it (DESIGN §10, "What production ran"), when its
  // revision is known; functions are then predicted as measured − removed + added.
  Inference(const ParsedUnit& unit, const FeedbackView& view, const AnalysisOptions& options,
            const ParsedUnit* deployed = nullptr, std::string deployed_revision = {});

  // A copy of `fn` with data attached and every node's estimate filled.
  FunctionInfo analyzeFunction(const FunctionInfo& fn);

 private:
  // One function's analysis: its passes and the state they share (inference.cc).
  class FunctionPass;

  Estimate inferCall(Node& node, const FunctionInfo& fn, const MatchResult& callee);
  // The call rule's cases (callsite_inference.cc): the call-site regression, the callee's overall
  // distribution, the callee's body analysed.
  Estimate regressionEstimate(const Node& node, const FunctionInfo& fn, const FeedbackItem& callee,
                              const inference_detail::SiteRegression& r) const;
  Estimate calleeOverallEstimate(const Node& node, const FeedbackItem& callee) const;
  Estimate calleeBodyEstimate(const Node& node, const FunctionInfo& fn);
  Estimate inferLoop(Node& node, const FunctionInfo& fn);
  // A callee seen with one kind of input only, costed for a call without a site of its own:
  // the range of `e` (costed at `predicted`) reaches down to one element's share.
  void widenForOtherInputs(const FeedbackItem& callee, double predicted, Estimate& e) const;
  // Picks a loop's iteration count by preference (DESIGN §6). Loops are visited in source order,
  // so the loops that fill a local container have their counts before the loop over it.
  void assignIterations(Node& node, FunctionInfo& fn, const MatchResult& self);
  // Code as written against the deployed body: fn.added gets every call that is new and every
  // call that is gone, each with its executions per call of the function.
  void diffAgainstDeployed(FunctionInfo& fn, const FunctionInfo& deployed);
  // A call gone from the deployed body that was the first access of a lazily loaded value on a
  // local object (a two-outcome callee costed at its loading outcome): the next access that
  // stays in the same loop scope (the same callee on that object, or a callee given the object
  // whose body reads the value) now loads it. Returns that access, or nullptr.
  const Node* nextAccessAfterRemoval(const FunctionInfo& fn,
                                     const std::vector<std::string>& now_path,
                                     const std::vector<bool>& stays, const FunctionInfo& old,
                                     const std::vector<std::string>& old_path, const Node& removed);
  // The likely range of a measured function's prediction: the measurement's z-range, plus the
  // new costs' ranges, less the removed ones', widened by the run-to-run drift; open above
  // (infinite) when a new part has no data (`unknown_new` calls, or a new call's own unknown
  // parts).
  Estimate::Interval intervalOf(const Node& root, const std::vector<AddedCost>& costs,
                                const std::vector<Node>& fn_nodes, int unknown_new) const;
  Estimate inferBranch(Node& node, const FunctionInfo& fn);
  // A branch's arm weights: production's share where an arm begins with a call it measured from
  // this function, else the static prior of a two-arm branch, else equal arms (every arm 1 in
  // the worst case). Sets the branch part: probability, arm_probabilities, measured.
  void weighArms(Node& node, const FunctionInfo& fn) const;
  Estimate bodyEstimate(const std::string& key);
  // A new call of a measured callee whose body holds a call with a bimodal production
  // distribution (both outcomes seen): the caller's own calls of that inner callee say which
  // outcome it takes from here. None at all: the new call is the first access and costs the slow
  // outcome. One measured from `fn` in the fast outcome, or one that surely ran before it: the
  // fast one. Otherwise the context is unknown: the slow outcome becomes the top of the call's
  // range, with `context_extra_ns` and a stated assumption (callee_context.cc).
  void addCalleeContext(const Node& call, const FunctionInfo& fn, Estimate& e);
  // A call of a two-outcome callee (lazily loaded, cached) on the same local object as an
  // earlier call of it that surely ran in the same iteration: it finds the value loaded and is
  // costed at the fast outcome (repeated_call.cc). Returns whether it applied.
  bool takeRepeatedCallFast(const Node& call, const FunctionInfo& fn, const MatchResult& callee,
                            Estimate& e) const;
  // How often `n` runs per call of the function, as factors (outermost first): the production
  // call count of a measured call in the same block when there is one (`calls_per_parent`, by
  // node id), else the enclosing loops' iterations × branch and guard probabilities.
  std::vector<CostFactor> executionFactors(const FunctionInfo& fn, const Node& n) const;
  const FunctionInfo* findBody(const std::string& key) const;

  const AnalysisOptions& options_;
  Matcher matcher_;
  std::unordered_map<std::string, const FunctionInfo*> bodies_;
  std::unordered_map<std::string, Estimate> memo_;
  struct CalleeContext {
    double extra_ns = 0;
    std::vector<fact::ContextOutcome> outcomes;
    std::vector<std::string> inner_keys;  // per outcome: the inner callee's key
    std::vector<double> extras;           // per outcome: slow − fast, × its calls
  };
  std::unordered_map<std::string, CalleeContext> context_memo_;  // by callee key
  // The inner calls with two production outcomes in `key`'s body, analysed once (memoized).
  const CalleeContext& contextOf(const std::string& key);
  std::unordered_set<std::string> in_progress_;
  std::vector<std::string> recursion_cuts_;  // keys whose recursive call bodyEstimate cut
  std::unordered_map<std::string, std::string> caller_cache_;
  std::unordered_map<std::string, const FunctionInfo*> deployed_;  // by key
  std::string deployed_revision_;
  bool has_deployed_ = false;
  bool analysing_deployed_ = false;
};

// Distribution arithmetic used by the inference: sums add means and percentiles (the
// percentile sum is an upper bound for independent parts; stated as an assumption where used).
Distribution addDist(const Distribution& a, const Distribution& b);
Distribution scaleDist(const Distribution& a, double k);
Distribution fromStats(const Stats& s);

}  // namespace perfhat::analysis
