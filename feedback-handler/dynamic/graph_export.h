// Exports of dynamic metrics for offline analysis (seed 001's MetricView CSV and jzprof's
// graph.dot): the VC / FI / FO matrices as CSV (rows = executions, i.e. time windows; columns =
// functions), the edge list as CSV, and the call graph as Graphviz dot with arcs labelled by call
// counts (arcs never taken are absent, as in the thesis).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "feedback-handler/dynamic/call_graph.h"

namespace perfhat::handler::dynamic {

enum class Matrix {
  kVisits,  // VC[n][j]: calls of j in execution n; a last row "VC*" sums the columns
  kFanIn,   // distinct callers of j in execution n
  kFanOut,  // distinct callees of j in execution n
};

struct Execution {
  std::string label;  // e.g. the window's start, RFC 3339
  GraphMetrics metrics;
};

// One column per function called or known in any execution, sorted by key. Fields are quoted
// (RFC 4180): keys hold commas and quotes.
std::string matrixCsv(const std::vector<Execution>& executions, Matrix which);

// caller,callee,count — one line per edge, most calls first.
std::string edgesCsv(const GraphMetrics& metrics);

struct DotOptions {
  std::string focus;       // empty: the whole graph; else the neighbourhood of this key
  size_t depth = 2;        // arcs away from the focus, callers and callees
  size_t max_nodes = 200;  // the most-visited nodes are kept beyond this
};
std::string toDot(const GraphMetrics& metrics, const DotOptions& options = {});

// Quoted CSV field.
std::string csvField(std::string_view s);

}  // namespace perfhat::handler::dynamic
