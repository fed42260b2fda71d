// The immutable result of analysing one document: the simplified AST per function (DESIGN §6)
// with production data attached (specification) and the rest inferred (Algorithm 1).
//
// Features (server/features/) are pure functions over a Snapshot; the LSP layer renders their
// results. Positions here are 0-based lines and 0-based UTF-8 byte columns of the document
// text the snapshot was built from; the protocol layer converts to the client's encoding.
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/feedback.h"
#include "server/analysis/derivation.h"
#include "server/analysis/shared_list.h"

namespace perfhat::analysis {

struct Position {
  int line = 0;
  int column = 0;  // UTF-8 byte offset within the line
  bool operator==(const Position&) const = default;
  auto operator<=>(const Position&) const = default;
};

struct Range {
  Position start;
  Position end;
  bool operator==(const Range&) const = default;
  bool contains(Position p) const { return !(p < start) && p < end; }
};

// A latency distribution in nanoseconds. `samples` is the number of observations behind it
// (0 for a value derived purely from assumptions).
struct Distribution {
  double mean_ns = 0;
  double p50_ns = 0;
  double p90_ns = 0;
  double p99_ns = 0;
  uint64_t samples = 0;
};

// The standard error of a mean measured over `count` calls, with σ taken from the spread as
// (p90 − p50) / 1.2816 (the normal p90 lies 1.2816 σ above the median); 0 without a spread.
// Inference sizes intervals with it, the diagnostics their noise allowance.
inline double standardErrorOfMean(double p50_ns, double p90_ns, uint64_t count) {
  if (count == 0 || !(p90_ns > p50_ns)) return 0;
  constexpr double kP90Z = 1.2816;
  return (p90_ns - p50_ns) / kP90Z / std::sqrt(static_cast<double>(count));
}

enum class Provenance {
  Unknown,   // no data and nothing to infer from: shown as "?", never as 0
  Measured,  // production data attached by specification matching
  Inferred,  // predicted by an inference rule
};

// How a function's production data was found (matching.cc); names in server/features/names.h.
enum class MatchKind {
  None,       // nothing matched
  Exact,      // the canonical key
  Mangled,    // the Itanium mangled name
  Rule,       // a project rule (.perfhat.json)
  Name,       // the qualified name, one overload
  Overloads,  // the qualified name, aggregated across overloads
  FileLine,   // the definition's file and line
  Virtual,    // the implementations a virtual call reached from here (call-site data)
};

struct Estimate {
  Provenance provenance = Provenance::Unknown;
  Distribution dist;
  Derivation derivation;
  // Parts without data that a known value leaves out (calls nothing is known about): the value
  // is then a lower bound, shown as "12 ms + ?". Bodies without calls or loops are not counted
  // here: they are stated as negligible.
  int unknown_parts = 0;
  // The part of dist.mean_ns that rests on data and the source alone: loops whose iteration
  // count is the configured default count 0 times, a branch counts its cheapest arm. Used to
  // test a prediction against what production measured (DESIGN §10, "What production ran").
  double floor_mean_ns = 0;
  // How far the value may lie from `dist`, as factors of it (about p10 and p90 of what it rests
  // on): the measurement's standard error, the spread of the call sites it was learned from, the
  // callee's own distribution when this caller's context is not known.
  double spread_lo = 1;
  double spread_hi = 1;
  // Predictions of a function production measured: the likely range of the prediction, from
  // the measurement's uncertainty and every added or removed cost's range.
  struct Interval {
    Distribution lo;
    Distribution hi;
  };
  std::optional<Interval> interval;
  // A call of a measured callee whose cost depends on the caller's context: a call in its body
  // has a bimodal production distribution (lazily loaded, cached), and production ran the
  // callee only in the fast outcome's context. What one call costs more in the slow outcome,
  // and which inner calls it rests on (for the warning and the hover); 0 when not
  // context-dependent.
  double context_extra_ns = 0;
  std::vector<fact::ContextOutcome> context;
  bool known() const { return provenance != Provenance::Unknown; }
};

enum class LoopKind { For, RangeFor, While, Do };

// One production item a function's data came from, with its own stats: the hover lists them
// when several were aggregated (the instantiations of a template, the overloads of a name).
struct MatchedPart {
  std::string key;
  std::optional<Stats> stats;
};

// What only a call node carries (Node::call).
struct CallFacts {
  std::string key;            // canonical key of the referenced function ("" if unresolved)
  std::string mangled;        // Itanium mangled name when libclang gives it
  std::string name;           // as written, for display
  bool in_workspace = false;  // a body is available for recursive analysis
  // The callee is declared in a system header (the standard library, libc, ...).
  bool system = false;
  // A call of a virtual function: production's call-site data of this function tells which
  // implementations it reached (`implementations`, each with its overall stats); the call's
  // estimate is their call sites from this function added up.
  bool is_virtual = false;
  std::vector<MatchedPart> implementations;
  // A call through a function pointer, `std::function` or member-function pointer (no callee
  // key): resolved like a virtual call, from what production ran from this function that it does
  // not call as written, among functions taking `params` (canonical; "" = any).
  bool indirect = false;
  // A call inside a lambda passed to a standard algorithm (ast_algorithms.cc): production
  // records its caller as the lambda, so the enclosing function has no call site for it.
  bool via_lambda = false;
  std::string params;
  // A call that adds elements to a local variable of the function: that variable's USR (a
  // range-for over it takes its count from such calls, LoopFacts::range_var).
  std::string fills_var;
  // A member call on a local variable of the function (`story.tasks()`): that variable's USR.
  std::string receiver_var;
  // The names of the local variables the call reads as its object and its arguments (`story` in
  // `story.tasks()` and in `storyPoints(story)`): what it may access of them, by name, so the
  // deployed text and the text as written (where USRs move with offsets) can be compared.
  std::vector<std::string> local_names;
  // The callee production measured has a body (in another file, from the workspace index) that
  // differs from what production ran: why its measured values may be out of date.
  struct ChangedBody {
    std::string name;      // the callee as the index names it
    std::string file;      // the file holding its body
    std::string revision;  // the revision production ran
  };
  std::optional<ChangedBody> callee_changed;
  // Production's count of this call per call of the function, from the call site (0 when
  // production has no call-site data for it, or the callee is called from several places here).
  double production_calls = 0;
};

// What only a loop node carries (Node::loop).
struct LoopFacts {
  LoopKind kind = LoopKind::For;
  int ordinal = -1;  // ordinal in source order within the function
  std::optional<double> iterations;
  IterationSource iteration_source = IterationSource::None;
  uint64_t executions = 0;       // Production: the loop executions behind the count
  std::string producer_key;      // range-for: key of the function producing the collection
  std::string producer_mangled;  // range-for: mangled name of the producer
  // Range-for over a local variable of the function (not a call): its USR, and its name as
  // written.
  std::string range_var;
  std::string range_var_name;
  // DataFlow iterations: the insertions that bound the count, as (call node id, executions per
  // call of the function), in source order.
  std::vector<std::pair<int, double>> fill_sites;
  // Iteration evidence found in the source (inference picks by preference, DESIGN §6).
  std::optional<double> constant_trip;  // `for (int i = 0; i < 100; ++i)`
  // Where a constant trip count came from when it is not a literal (`kCount` = 16, a range over
  // `int[8]`); empty for a literal.
  TripCountSource constant_trip_source;
  std::optional<double> annotated_iterations;  // `// perfhat: iterations=N`
};

// What only a branch node carries (Node::branch).
struct BranchFacts {
  int arms = 0;  // number of arms (an `if` without `else` has 2, one empty)
  // Probability used for the taken arm(s), and whether it was assumed.
  std::optional<double> probability;
  // Two-arm branches (if / ?:) whose arms inference weighted unequally: the probability of
  // each arm (arm 0 = taken). Empty when every arm uses `probability`.
  std::vector<double> arm_probabilities;
  // Static prior for arm 0 of a two-arm branch, from the condition and the arms as written
  // (Ball & Larus heuristics, see ast_branches.cc), with the heuristics behind it.
  std::optional<double> prior;
  BranchPrior prior_reason;
  // The arm probabilities come from production: a measured call at the top of an arm ran on that
  // share of the branch's executions (`evidence`: that call's node id).
  bool measured = false;
  int evidence = -1;
  // Its condition as the diff with the deployed body compares it (conditionShape in
  // ast_branches.cc); a call under a changed condition is not where production counted it.
  std::string condition;
  // Probability of reaching arm `a`, when inference set one.
  std::optional<double> armProbability(int a) const {
    if (a >= 0 && static_cast<size_t>(a) < arm_probabilities.size()) return arm_probabilities[a];
    return probability;
  }
};

// One node of a function's simplified AST. Node ids are indices into FunctionInfo::nodes and
// stable for a given text; node 0 is the function itself.
//
// What only one kind of node carries sits in that kind's part (`call`, `loop`, `branch`); the
// parts of the other kinds stay at their defaults. Three plain members rather than a
// std::variant: the walk, the inference and the codec read a part after checking `kind` once
// (or fill a node before its kind is final), and a default part reads as "nothing known" where a
// variant would need a get_if at every access and throw on a slip.
struct Node {
  int id = 0;
  NodeKind kind = NodeKind::Function;
  Range range;      // whole extent
  Position hint;    // where an inline hint goes (end of call, end of loop header)
  int parent = -1;  // -1 for the function node
  std::vector<int> children;
  // Where this node sits in its parent. Children of a Branch: index of the arm (-1: the
  // condition, always evaluated). Children of a Loop: -1 for the init statement / range
  // expression (evaluated once), 0 for the body, condition and increment (every iteration).
  int arm = 0;

  CallFacts call;
  LoopFacts loop;
  BranchFacts branch;

  // Cost of one execution of this node (for a loop: all iterations; for a function: the total).
  Estimate estimate;
  // Production data attached to this node (the callee's stats for a call, the function's own
  // for the function node), when specification matched any.
  std::optional<Stats> measured;
  std::optional<Stats> baseline;
  std::vector<std::string> versions;
  std::vector<std::string> hosts;
  // Calls its services' exporters reported lost in the window: `measured` counts may be low.
  double dropped_calls = 0;
  // Probe distribution: the share of the fleet `measured` comes from (counts already scaled),
  // or, with no data, that no variant probed it.
  std::optional<Exposure> exposure;
  // Of `measured`'s calls, the weighted number recorded by sampling (the request sampler or
  // libperfhat's collection budget) and the records that carried them: when sampled_calls > 0
  // its counts and percentiles are estimated from samples.
  double sampled_calls = 0;
  double sampled_records = 0;
  bool estimatedFromSamples() const { return measured && sampled_calls > 0; }
};

// One factor by which a node's cost multiplies up to one call of its function.
struct CostFactor {
  enum class Kind { Iterations, Branch, ProductionCalls, ExtraCalls };
  Kind kind = Kind::Iterations;
  double value = 1;
  // The node it comes from: the loop, the branch, or the measured call in the same block whose
  // production count gives the executions (-1 for ExtraCalls).
  int from = -1;
  bool assumed = false;  // default iteration count or a branch weight without branch data
  // The range `value` may take: the same where data gives it, the assumption's stated range
  // otherwise (AnalysisOptions, "assumption ranges").
  double lo = 1;
  double hi = 1;
};

// A cost the code as written adds to a function production measured: a call without call-site
// data, or more calls of a callee than production counted. Inference computes it once; the
// function's prediction, the warning and the hover all print this one derivation.
struct AddedCost {
  enum class Status {
    New,          // not in what production ran (or no room for it there): counted in the prediction
    PossiblyNew,  // it may already run in production: not counted, shown as information
    Removed,      // ran in production and is gone from the code as written: subtracted
  };
  Status status = Status::New;
  int node = -1;                    // the call node
  Distribution per_execution;       // one execution of the call
  std::vector<CostFactor> factors;  // outermost first; their product is `executions`
  double executions = 1;
  Distribution total;  // per_execution × executions: the cost per call of the function
  Distribution total_lo, total_hi;  // its range: the per-execution spread × the factors' ranges
  // Consistency test (DESIGN §10): the expected cost resting on data only (assumed factors count
  // 0) against the function's measured mean less what its measured calls account for.
  double floor_ns = 0;
  double room_ns = 0;
  // Removed: the call as production ran it (`node` is -1): its name and 0-based line in the
  // deployed text. Its factors' `from` refer to nodes of that text and are not shown as links.
  fact::CallName removed_name;
  int removed_line = -1;
};

// What the analysis knows about the body production ran for a function (DESIGN §10, "What
// production ran").
enum class DeployedBody {
  Unknown,    // no deployed revision known: new calls are told apart by the room test
  Identical,  // the code as written is token for token what production ran: measured as is
  Changed,    // differs: measured − removed + added, node by node
  Absent,     // the deployed text has no function with this key: a new function
};

struct FunctionInfo {
  std::string key;          // canonical signature (DESIGN §3)
  std::string mangled;      // Itanium mangled name
  std::string name;         // short name for display
  Range range;              // whole definition
  Range name_range;         // the declarator name (code lens / diagnostic anchor)
  std::vector<Node> nodes;  // nodes[0] is the function node
  // How the function's measured data was matched (None when nothing matched).
  MatchKind match = MatchKind::None;
  std::vector<MatchedPart> matched;  // the item(s) behind `match`; several when aggregated
  // A special member the compiler defines (no definition in the source): ranges are the class's.
  // The analysis keeps it only when production data matched it.
  bool implicit = false;
  // True when the body contains nodes without production data whose values were inferred: the
  // function total is then a prediction for the code as written, not a measurement.
  bool changed = false;
  // Calls in the body that could not be resolved to a function (undeclared names after a parse
  // error, calls through function pointers, calls that depend on a template parameter). They
  // are not nodes, so a body with any of them is never taken as call-free.
  int unresolved_calls = 0;
  // Costs the code as written adds to the measured total (empty without production data), and
  // with a known deployed body also what it removes.
  std::vector<AddedCost> added;
  // Hash of the definition's tokens (comments and layout ignored): equal hashes, equal code.
  uint64_t body_hash = 0;
  DeployedBody deployed = DeployedBody::Unknown;
  std::string deployed_revision;  // the revision compared against, when known
  std::string file;               // absolute path of the file holding the definition

  const Node& root() const { return nodes.front(); }
};

struct ParseProblem {
  Range range;
  // libclang's diagnostic, or the reason a step failed (an exception's or libclang's error);
  // empty when `truncated` says what happened.
  std::string message;
  bool error = true;  // false: warning
  // Where the problem arose. A diagnostic of an included file stands at the document's top and
  // names the file and line; the server's own failures name the step that failed.
  enum class Origin {
    Document,      // libclang, at `range`
    IncludedFile,  // libclang, in `file` at `line`
    CommandLine,   // libclang, about the compile command
    Parse,         // libclang could not parse the document at all
    Analysis,      // the analysis failed (an exception), no snapshot of the document
  };
  Origin origin = Origin::Document;
  std::string file;   // IncludedFile: the file's path
  unsigned line = 0;  // IncludedFile: its line
  // The walk stopped at the nesting limit `depth` in `function` (ast_builder.cc): code nested
  // deeper has no nodes.
  struct Truncated {
    int depth = 0;
    std::string function;
    bool operator==(const Truncated&) const = default;
  };
  std::optional<Truncated> truncated;
  bool operator==(const ParseProblem&) const = default;
};

struct Snapshot {
  std::string path;  // absolute file path
  int version = 0;   // document version the text came from
  // Shared, immutable once shared: the next snapshot of an edited document holds the functions
  // the edit could not change without copying them, while readers may still hold this one.
  SharedList<FunctionInfo> functions;
  std::vector<ParseProblem> problems;  // parse errors and analysis warnings
  bool stale = false;                  // feedback came from cache while the handler was down
  // Timings of the pipeline that produced this snapshot, for --check and benchmarks.
  double parse_ms = 0;
  double fetch_ms = 0;     // the feedback lookups alone
  double deployed_ms = 0;  // the deployed revision's text: read from git and parsed (then cached)
  double analysis_ms = 0;

  // The innermost node whose range contains `p`, or nullptr.
  const Node* nodeAt(Position p, const FunctionInfo** owner = nullptr) const;
};

using SnapshotPtr = std::shared_ptr<const Snapshot>;

}  // namespace perfhat::analysis
