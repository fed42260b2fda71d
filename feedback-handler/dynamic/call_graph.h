// Dynamic metrics of one service over one window (seed 001; reference §2.6 and §4.3): visit
// counts, fan-in/fan-out with per-edge counts, never-called and leaf functions, inclusive and
// self time, demand and its rank, and the Hill α of call-frequency skew.
//
// A CallGraph is built from stored aggregate rows: function rows (kind f: inclusive latency, one
// weighted value per call), call-site rows (kind c: the callee's latency under one caller) and
// self-time rows (kind t). Adding rows is an exact merge (sketches merge bin by bin, sums and
// counts add), so rows of several replicas, versions and minutes give the same graph in any
// order, and graphs of two windows add into the graph of their union.
//
// Self time. mean = (Σ inclusive − Σ inclusive of direct callees under this caller) / visits,
// from the function's and its call-site rows' exact sums: it holds however the children's spans
// were split over requests (the call-site rows are linked across requests). p50 comes from the
// per-call self-time sketch (kind t), which the span ingest and libperfhat fill when a call ends
// with its children known (docs/dynamic-metrics.md says when a child can be missed).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/ddsketch.h"
#include "feedback-handler/dynamic/hill.h"
#include "feedback-handler/store/batch.h"

namespace perfhat::handler::dynamic {

struct Edge {
  double count = 0;   // weighted calls of the callee made by the caller
  double sum_ns = 0;  // weighted Σ of those calls' inclusive durations
};

class CallGraph {
 public:
  // One stored row; kinds other than function, call site and self time are ignored.
  void addRow(AggKind kind, std::string_view key, std::string_view sub, const DDSketch& sketch);
  // A function known to exist (probed, seen before) whether or not it ran in this window.
  void addKnown(std::string_view key) { known_.emplace(key); }
  void merge(const CallGraph& other);

  struct Function {
    DDSketch inclusive;
    DDSketch self;
  };
  const std::map<std::string, Function, std::less<>>& functions() const { return functions_; }
  // (caller, callee) → edge.
  const std::map<std::pair<std::string, std::string>, Edge>& edges() const { return edges_; }
  const std::set<std::string, std::less<>>& known() const { return known_; }

 private:
  std::map<std::string, Function, std::less<>> functions_;
  std::map<std::pair<std::string, std::string>, Edge> edges_;
  std::set<std::string, std::less<>> known_;
};

struct Neighbour {
  std::string key;
  double count = 0;
};

struct FunctionMetrics {
  std::string key;
  double visits = 0;               // VC: weighted calls in the window
  std::vector<Neighbour> callers;  // FI with per-edge counts, most calls first
  std::vector<Neighbour> callees;  // FO with per-edge counts, most calls first
  double inclusive_p50_ns = 0, inclusive_mean_ns = 0;
  std::optional<double> self_p50_ns;  // none without self-time rows (and not a leaf)
  double self_mean_ns = 0;
  double demand_ns = 0;       // VC × mean self time
  size_t demand_rank = 0;     // 1 = largest demand; 0 = not called
  bool leaf = false;          // called, calls no probed function
  bool never_called = false;  // known, no call in the window
};

struct GraphMetrics {
  std::map<std::string, FunctionMetrics, std::less<>> functions;  // every called or known key
  std::vector<std::string> never_called;                          // sorted
  std::vector<std::string> leaves;                                // sorted
  std::optional<HillEstimate> skew;  // over the visit counts of the called functions
  size_t edges = 0;                  // distinct (caller, callee) pairs
};

GraphMetrics derive(const CallGraph& graph, const HillOptions& hill = {});

}  // namespace perfhat::handler::dynamic
