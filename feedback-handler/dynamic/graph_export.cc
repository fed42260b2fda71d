#include "feedback-handler/dynamic/graph_export.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <deque>
#include <map>
#include <set>

namespace perfhat::handler::dynamic {
namespace {

std::string number(double v) {
  char b[32];
  // Counts are weighted estimates: integers print as integers, the rest with 6 digits.
  if (v == std::floor(v) && std::fabs(v) < 1e15) {
    std::snprintf(b, sizeof b, "%.0f", v);
  } else {
    std::snprintf(b, sizeof b, "%.6g", v);
  }
  return b;
}

// A dot string's contents: quotes and backslashes escaped, line breaks as spaces.
std::string dotEscape(std::string_view s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    if (c == '\n' || c == '\r') {
      o += ' ';
      continue;
    }
    o += c;
  }
  return o;
}
std::string dotId(std::string_view s) { return "\"" + dotEscape(s) + "\""; }

}  // namespace

std::string csvField(std::string_view s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '"') o += '"';
    o += c;
  }
  return o + "\"";
}

std::string matrixCsv(const std::vector<Execution>& executions, Matrix which) {
  std::set<std::string> keys;
  for (const Execution& e : executions) {
    for (const auto& [k, f] : e.metrics.functions) keys.insert(k);
  }
  std::string out = "\"execution\"";
  for (const std::string& k : keys) out += "," + csvField(k);
  out += "\n";
  std::map<std::string, double> totals;
  for (const Execution& e : executions) {
    out += csvField(e.label);
    for (const std::string& k : keys) {
      const auto it = e.metrics.functions.find(k);
      double v = 0;
      if (it != e.metrics.functions.end()) {
        v = which == Matrix::kVisits  ? it->second.visits
            : which == Matrix::kFanIn ? static_cast<double>(it->second.callers.size())
                                      : static_cast<double>(it->second.callees.size());
      }
      totals[k] += v;
      out += "," + number(v);
    }
    out += "\n";
  }
  if (which == Matrix::kVisits) {  // VC*_j = Σ_n VC_{n,j}
    out += "\"VC*\"";
    for (const std::string& k : keys) out += "," + number(totals[k]);
    out += "\n";
  }
  return out;
}

std::string edgesCsv(const GraphMetrics& metrics) {
  struct Row {
    const std::string* caller;
    const std::string* callee;
    double count;
  };
  std::vector<Row> rows;
  for (const auto& [k, f] : metrics.functions) {
    for (const Neighbour& c : f.callees) rows.push_back({&f.key, &c.key, c.count});
  }
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    if (a.count != b.count) return a.count > b.count;
    return std::tie(*a.caller, *a.callee) < std::tie(*b.caller, *b.callee);
  });
  std::string out = "\"caller\",\"callee\",\"count\"\n";
  for (const Row& r : rows) {
    out += csvField(*r.caller) + "," + csvField(*r.callee) + "," + number(r.count) + "\n";
  }
  return out;
}

std::string toDot(const GraphMetrics& metrics, const DotOptions& options) {
  std::set<std::string> nodes;
  if (options.focus.empty()) {
    for (const auto& [k, f] : metrics.functions) {
      if (f.visits > 0 || !f.callers.empty()) nodes.insert(k);
    }
  } else if (metrics.functions.count(options.focus)) {
    std::deque<std::pair<std::string, size_t>> todo{{options.focus, 0}};
    nodes.insert(options.focus);
    while (!todo.empty()) {
      auto [k, d] = todo.front();
      todo.pop_front();
      if (d >= options.depth) continue;
      const auto it = metrics.functions.find(k);
      if (it == metrics.functions.end()) continue;
      for (const auto* list : {&it->second.callers, &it->second.callees}) {
        for (const Neighbour& n : *list) {
          if (nodes.insert(n.key).second) todo.emplace_back(n.key, d + 1);
        }
      }
    }
  }
  if (nodes.size() > options.max_nodes) {  // keep the focus and the most visited
    std::vector<std::pair<double, std::string>> by_visits;
    for (const std::string& k : nodes) {
      const auto it = metrics.functions.find(k);
      const double v = k == options.focus              ? INFINITY
                       : it == metrics.functions.end() ? 0
                                                       : it->second.visits;
      by_visits.emplace_back(-v, k);
    }
    std::sort(by_visits.begin(), by_visits.end());
    nodes.clear();
    for (size_t i = 0; i < options.max_nodes; ++i) nodes.insert(by_visits[i].second);
  }
  std::string out = "digraph calls {\n  node [shape=box, fontname=\"monospace\"];\n";
  for (const std::string& k : nodes) {
    const auto it = metrics.functions.find(k);
    const double v = it == metrics.functions.end() ? 0 : it->second.visits;
    out += "  " + dotId(k) + " [label=\"" + dotEscape(k) + "\\n" + number(v) + " calls\"" +
           (k == options.focus ? ", style=bold" : "") + "];\n";
  }
  for (const std::string& k : nodes) {
    const auto it = metrics.functions.find(k);
    if (it == metrics.functions.end()) continue;
    for (const Neighbour& c : it->second.callees) {
      if (!nodes.count(c.key)) continue;
      out += "  " + dotId(k) + " -> " + dotId(c.key) + " [label=\"" + number(c.count) + "\"];\n";
    }
  }
  return out + "}\n";
}

}  // namespace perfhat::handler::dynamic
