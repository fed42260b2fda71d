// How an estimate came about, as facts of numbers, enums and names: the inference states them,
// and only server/features/derivation_text.cc turns them into words (the hover's "Prediction"
// block, the inlay hint's tooltip).
//
// A derivation has a one-line summary, the inputs it used and what it assumed. Each is one of the
// structs below; a new derivation adds a struct here, to the variant it belongs to, and its
// wording to derivation_text.cc (the compiler lists every visitor that misses it). Names in the
// facts (`callee`, `caller`, `key`) are identifiers as the code or production spells them; a call
// is named by a CallName, which server/features/names.h words ("name()", or the key).
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "server/analysis/source_facts.h"

namespace perfhat::analysis {

// The inference model behind an estimate (server/features/names.h gives each its name).
enum class Model {
  Unstated,            // nothing said (a value built without a model)
  None,                // no data and nothing to infer from
  Measured,            // production data of this node
  Leaf,                // a body without calls or loops: negligible
  CallsiteRegression,  // latency regressed on the call sites' arguments
  CalleeOverall,       // the callee's overall distribution (no data for this call site)
  WorkspaceBody,       // the callee's body in the workspace, analysed
  Loop,                // iterations × body cost
  Branch,              // arms weighted by their probabilities
  Sum,                 // a body's parts added up (or measured − removed + added)
  Diff,                // a call gone since the deployed revision
};

enum class NodeKind { Function, Call, Loop, Branch };

// Where a loop's iteration count came from, in order of preference (DESIGN §6).
enum class IterationSource {
  None,
  Production,    // loop-site data
  ProducerSize,  // recorded result size of the collection's producer
  ConstantTrip,  // constant trip count in the source
  Annotation,    // `// perfhat: iterations=N` or the code action
  DataFlow,      // a local container: bounded by the insertions the function makes into it
  Default,       // configurable default, flagged as an assumption
};

namespace fact {

// A call as the facts name it: the function's name as the code spells it, or, for a call the
// walk found no name for (`name` empty), its key. Both empty: not a call (a nested block).
struct CallName {
  std::string name;
  std::string key;  // only when `name` is empty
  bool operator==(const CallName&) const = default;
};

// ---- Summaries: one line each. ----
struct Production {  // the node's own production distribution
  double mean_ns = 0;
};
struct ProductionCallSite {  // production's call site caller() → callee
  std::string caller;
  CallName callee;
};
struct ProductionCallee {  // the callee's overall data (production records no call sites)
  CallName callee;
  double mean_ns = 0;
};
struct PartsSum {  // a body without data: its parts added up
  size_t parts = 0;
  double total_ns = 0;
};
struct NothingKnown {};  // no data and nothing known inside
struct MeasuredPlusNew {
  double measured_ns = 0;
  double added_ns = 0;
};
struct MeasuredDiff {  // measured − removed + added, against the deployed body
  double measured_ns = 0;
  double removed_ns = 0;
  double added_ns = 0;
};
struct BodyUnavailable {};
struct RecursiveCall {};
struct DepthTruncated {
  int max_depth = 0;
};
struct RecursionCut {  // a cycle below a body was cut at `key` (also an assumption)
  std::string key;
};
struct BodyCostUnknown {};
struct NoData {
  CallName callee;
};
struct Regression {  // call-site regression evaluated at this caller's workload
  double predicted_ns = 0;
  double rate = 0;  // calls/s of `caller`
  std::string caller;
};
struct CalleeOverall {
  double mean_ns = 0;
  CallName callee;
  uint64_t calls = 0;
};
struct FromBody {
  double mean_ns = 0;
  CallName callee;
};
struct Negligible {};  // no data, no calls, no loops
struct LoopProduct {   // iterations × the cost of one iteration
  enum class Body { Known, Negligible, Unknown };
  double iterations = 0;
  Body body = Body::Known;
  double body_ns = 0;
};
struct BranchUnknown {};
struct WorstArm {
  double mean_ns = 0;
};
struct ArmsWeighted {  // two arms, p(taken) / p(not taken)
  double taken = 0;
  double not_taken = 0;
  bool production = false;  // from production's counts, not a static prior
};
struct ArmsEqual {
  double p = 0;
};
struct RepeatedFast {  // the callee already ran on the same object at `line` (1-based)
  double fast_ns = 0;
  CallName callee;
  int line = 0;
};

using Summary = std::variant<std::monostate, Production, ProductionCallSite, ProductionCallee,
                             PartsSum, NothingKnown, MeasuredPlusNew, MeasuredDiff, BodyUnavailable,
                             RecursiveCall, DepthTruncated, RecursionCut, BodyCostUnknown, NoData,
                             Regression, CalleeOverall, FromBody, Negligible, LoopProduct,
                             BranchUnknown, WorstArm, ArmsWeighted, ArmsEqual, RepeatedFast>;

// ---- Inputs: the values a derivation used. ----
struct PartCost {  // a part of a sum: a call (by name), a loop or a branch (by 1-based line)
  NodeKind kind = NodeKind::Call;
  CallName callee;  // kind Call
  int line = 0;
  double mean_ns = 0;
};
struct Iterations {  // a loop's count and where it came from
  double n = 0;
  IterationSource source = IterationSource::None;
  uint64_t loop_executions = 0;  // Production: executions behind the mean
  std::string producer;          // ProducerSize: the producer's key
  std::string container;         // DataFlow: the local container filled above
};
enum class CallChange { New, MoreCalls, Removed };
struct ChangedCall {  // factors × one execution
  CallChange change = CallChange::New;
  CallName callee;
  std::vector<double> factors;  // outermost first
  double per_execution_ns = 0;
};
struct MeasuredTotal {
  double mean_ns = 0;
};
struct CallSitesUsed {
  size_t sites = 0;
  CallName callee;
};
struct CallSiteSeen {
  std::string caller;
  double mean_ns = 0;
  double rate = 0;  // calls/s of the caller
};
struct RegressionModel {  // latency = β0 ns + β1 ns × rate (+ β2 ns × size)
  std::vector<double> beta;
  double r2_adj = 0;
};
struct CalleeStats {
  CallName callee;
  double mean_ns = 0;
  double p99_ns = 0;
};
struct BodySummary {  // what the callee's body analysis said
  std::string key;
  Summary summary;
};
struct BranchEvidence {  // a measured call at the top of an arm
  CallName callee;
  double calls = 0;  // per call of `caller`
  std::string caller;
  int arm = 0;
};

using InputFact =
    std::variant<PartCost, Iterations, ChangedCall, MeasuredTotal, CallSitesUsed, CallSiteSeen,
                 RegressionModel, CalleeStats, BodySummary, BranchEvidence>;

// Where an input of a nested part sits in the node that used it, outermost first.
enum class Scope { Once, PerIteration, Arm, Condition };
struct Within {
  Scope scope = Scope::Once;
  int arm = 0;  // Scope::Arm
};
struct Input {
  std::vector<Within> within;
  InputFact fact;
};

// ---- Assumptions: anything not backed by data. ----
struct Aggregated {  // data aggregated across overloads (and instantiations)
  std::string name;
  bool instantiations = false;
};
struct NegligibleParts {  // parts without data whose bodies make no calls and have no loops
  std::vector<CallName> names;
};
struct UnknownParts {  // parts without data: calls by name, an empty name for a nested block
  std::vector<CallName> names;
};
struct SumOfParts {
  std::string function;
};
struct NewCallsAdd {};
struct NotCounted {  // a possibly new call: the part backed by data fits in the room
  ChangedCall call;
  bool possibly_new = true;
  double floor_ns = 0;
  double room_ns = 0;
};
struct ComparedWithDeployed {
  std::string revision;
};
struct ClampedAtZero {};
struct UnknownNewCalls {
  int count = 0;
};
struct NegligibleBody {  // this function / loop / branch makes no calls and has no loops
  NodeKind kind = NodeKind::Function;
  std::string function;  // kind Function
};
struct DeveloperIterations {};
struct InsertionBound {
  std::string container;
  bool counts_assumed = false;  // the insertions' own counts rest on assumptions
};
struct DefaultIterations {
  double n = 0;
};
struct PercentilesScaled {};
struct WorstCase {};
struct StaticPrior {
  BranchPrior heuristic;  // the heuristics the walk matched (source_facts.h)
  double taken = 0;
  double not_taken = 0;
};
struct EqualArms {
  int arms = 0;
  double p = 0;
};
struct OneContext {
  double p50_ns = 0;
  double p90_ns = 0;
};
// A callee whose calls all returned about `mean_size` elements, costed for a caller production
// did not measure it from: that caller's input may be of any size, down to one element's share.
struct OtherInputs {
  double one_element_ns = 0;
  double mean_size = 0;
};
struct WeakFit {
  double r2_adj = 0;
};
struct OutsideObserved {
  double rate = 0;
  double lo = 0;
  double hi = 0;
};
struct ConstantWorkloads {};
struct WorkloadUnknown {
  std::string caller;
};
struct InputSizeAtMean {
  double size = 0;
};
struct NoCallSiteData {};
struct BodyAnalysed {
  CallName callee;
  std::string file;  // the file holding the body when it is not the caller's, else ""
};
// One inner call with two production outcomes, in a callee called from a new place.
struct ContextOutcome {
  CallName inner;
  CallName outer;
  double p50_ns = 0;
  double slow_ns = 0;
  double calls = 1;
};
// The caller makes no other call of the inner callees (`outcomes`): the new call is the first
// access from here, so it takes their slow outcome, `extra_ns` per call above the fast one.
struct FirstAccessHere {
  std::vector<ContextOutcome> outcomes;
  double extra_ns = 0;
};
struct ContextDependent {
  std::vector<ContextOutcome> outcomes;
  double extra_ns = 0;
};
struct TwoOutcomesRepeated {
  CallName callee;
  double p50_ns = 0;
  bool slow = true;     // `other_ns` is the slow outcome (else the fastest call)
  double other_ns = 0;  //
  int line = 0;         // 1-based line of the earlier call
  double instead_ns = 0;
};

// A removed call was the first access of a lazily loaded value on `object`: the next access
// that stays (`next`) now loads it, so the removal saves only the loaded outcome (`loaded_ns`
// per call instead of `loading_ns`).
struct LoadMovesOn {
  CallName removed;
  std::string object;
  CallName next;
  double loaded_ns = 0;
  double loading_ns = 0;
};

using Assumption =
    std::variant<Aggregated, NegligibleParts, UnknownParts, SumOfParts, NewCallsAdd, NotCounted,
                 ComparedWithDeployed, ClampedAtZero, UnknownNewCalls, NegligibleBody,
                 DeveloperIterations, InsertionBound, DefaultIterations, PercentilesScaled,
                 WorstCase, StaticPrior, EqualArms, OneContext, OtherInputs, WeakFit,
                 OutsideObserved, ConstantWorkloads, WorkloadUnknown, InputSizeAtMean,
                 NoCallSiteData, BodyAnalysed, RecursionCut, ContextDependent, TwoOutcomesRepeated,
                 FirstAccessHere, LoadMovesOn>;

}  // namespace fact

// How a value came about, for the hover. Every inferred value carries one.
struct Derivation {
  Model model = Model::Unstated;
  fact::Summary summary;
  std::vector<fact::Input> inputs;
  std::vector<fact::Assumption> assumptions;

  bool hasSummary() const { return !std::holds_alternative<std::monostate>(summary); }
  // The first assumption of type T, or nullptr.
  template <typename T>
  const T* assumption() const {
    for (const fact::Assumption& a : assumptions)
      if (const T* t = std::get_if<T>(&a)) return t;
    return nullptr;
  }
};

}  // namespace perfhat::analysis
