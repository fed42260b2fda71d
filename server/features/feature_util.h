// Helpers shared by the features: which figure to show for a node, where a node sits in its
// function, and the small texts (node names, iteration sources) every feature prints alike.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "server/features/features.h"

namespace perfhat::features::detail {

using analysis::Distribution;
using analysis::Estimate;
using analysis::FunctionInfo;
using analysis::Node;

// The main statistic (Options::main_statistic) of a distribution or of production stats. A
// percentile left at 0 while the mean is known falls back to the mean, so a producer that only
// computed means still shows a figure instead of a misleading 0.
double pick(const Distribution& d, const Options& o);
double pick(const Stats& s, const Options& o);
// "p50", "mean", "p90", "p99": the label printed beside the main figure.
std::string statLabel(const Options& o);

// The figure a node shows and how it came about: always the node's estimate (the cost of the
// code as written). `measured` is not a fallback: for a changed function it describes the old
// code, so an unknown estimate stays "?". `ns` is empty when unknown.
struct NodeValue {
  std::optional<double> ns;
  HintKind kind = HintKind::Unknown;
};
NodeValue valueOf(const Node& n, const Options& o);

// Ancestors of `n` from its parent up to (and including) the function node.
std::vector<const Node*> ancestors(const FunctionInfo& f, const Node& n);
// How many times `n` runs per call of its function: the product of the enclosing loops'
// iterations and branch probabilities (arm -1 children, which run once per loop or branch,
// are not multiplied). Empty when an enclosing loop's count is unknown.
std::optional<double> timesPerCall(const FunctionInfo& f, const Node& n);

// What one iteration of `loop` costs when the whole loop costs `total`: the parts evaluated once
// (init statement, range expression: arm -1) are taken out first. Empty without iterations.
std::optional<double> perIteration(const FunctionInfo& f, const Node& loop, double total,
                                   const Options& o);

// "getTasks() (12.4 ms) × 100 × 3 iterations × 50 % branch = 3.72 s": a cost the code as written
// adds per call of its function, with the factors inference multiplied (the warning, the hover
// and the function's prediction all use this one derivation).
std::string addedCostText(const FunctionInfo& f, const analysis::AddedCost& a, const Options& o);
// The figure of a value that leaves parts without data out: "12.4 ms + ?" (a lower bound).
std::string valueWithUnknown(double ns, const Estimate& e);

// "getTasks()", "for loop", "range-for loop", "branch", "listStories()".
std::string displayName(const FunctionInfo& f, const Node& n);
// "production loop data", "result size of the producer", ...
std::string iterationSourceText(analysis::IterationSource s);
// True for an iteration count the user should treat with care (default or unknown).
bool iterationsAssumed(const Node& loop);

// The innermost node of `s` whose range contains `p` (inclusive of the end, so a cursor right
// after `)` still finds the call), with its function. Both null when none.
struct Located {
  const FunctionInfo* function = nullptr;
  const Node* node = nullptr;
};
Located locate(const Snapshot& s, Position p);

// True when `p` lies in [r.start, r.end] (end inclusive).
bool within(const Range& r, Position p);
// True when two ranges share at least one position (ends inclusive).
bool overlaps(const Range& a, const Range& b);

}  // namespace perfhat::features::detail
