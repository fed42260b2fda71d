#include "feedback-handler/dynamic/call_graph.h"

#include <algorithm>

namespace perfhat::handler::dynamic {

void CallGraph::addRow(AggKind kind, std::string_view key, std::string_view sub,
                       const DDSketch& sketch) {
  switch (kind) {
    case AggKind::kFunction:
      functions_.try_emplace(std::string(key)).first->second.inclusive.merge(sketch);
      break;
    case AggKind::kSelfTime:
      functions_.try_emplace(std::string(key)).first->second.self.merge(sketch);
      break;
    case AggKind::kCallSite: {
      Edge& e = edges_[{std::string(sub), std::string(key)}];
      AggValue::addCount(e.count, sketch.count());
      AggValue::addSum(e.sum_ns, sketch.sum());
      break;
    }
    default:
      break;
  }
}

void CallGraph::merge(const CallGraph& other) {
  for (const auto& [k, f] : other.functions_) {
    Function& into = functions_[k];
    into.inclusive.merge(f.inclusive);
    into.self.merge(f.self);
  }
  for (const auto& [k, e] : other.edges_) {
    Edge& into = edges_[k];
    AggValue::addCount(into.count, e.count);
    AggValue::addSum(into.sum_ns, e.sum_ns);
  }
  known_.insert(other.known_.begin(), other.known_.end());
}

namespace {

void byCount(std::vector<Neighbour>& v) {
  std::sort(v.begin(), v.end(), [](const Neighbour& a, const Neighbour& b) {
    return a.count != b.count ? a.count > b.count : a.key < b.key;
  });
}

}  // namespace

GraphMetrics derive(const CallGraph& graph, const HillOptions& hill) {
  GraphMetrics m;
  auto entry = [&](const std::string& key) -> FunctionMetrics& {
    auto [it, inserted] = m.functions.try_emplace(key);
    if (inserted) it->second.key = key;
    return it->second;
  };
  for (const std::string& k : graph.known()) entry(k);
  for (const auto& [k, f] : graph.functions()) {
    FunctionMetrics& fm = entry(k);
    fm.visits = f.inclusive.count();
    if (fm.visits > 0) {
      fm.inclusive_p50_ns = f.inclusive.quantile(0.5);
      fm.inclusive_mean_ns = f.inclusive.mean();
    }
    if (!f.self.empty()) fm.self_p50_ns = f.self.quantile(0.5);
  }
  std::map<std::string, double, std::less<>> children_ns;  // caller → Σ callee time under it
  for (const auto& [pair, e] : graph.edges()) {
    if (e.count <= 0) continue;
    entry(pair.first).callees.push_back({pair.second, e.count});
    entry(pair.second).callers.push_back({pair.first, e.count});
    children_ns[pair.first] += e.sum_ns;
    ++m.edges;
  }
  std::vector<FunctionMetrics*> called;
  std::vector<double> visits;
  for (auto& [k, fm] : m.functions) {
    byCount(fm.callers);
    byCount(fm.callees);
    if (fm.visits <= 0) {
      // Called under a caller but without a function row of its own in the window (rows on
      // either side of a window edge): not "never called", just not counted here.
      if (fm.callers.empty()) {
        fm.never_called = true;
        m.never_called.push_back(k);
      }
      continue;
    }
    const auto f = graph.functions().find(k);
    const double total = f->second.inclusive.sum();
    const auto c = children_ns.find(k);
    const double self_total = std::max(0.0, total - (c == children_ns.end() ? 0 : c->second));
    fm.self_mean_ns = self_total / fm.visits;
    fm.demand_ns = fm.visits * fm.self_mean_ns;
    fm.leaf = fm.callees.empty();
    if (fm.leaf) {
      m.leaves.push_back(k);
      // A leaf's self time is its inclusive time, call by call.
      if (!fm.self_p50_ns) fm.self_p50_ns = fm.inclusive_p50_ns;
    }
    called.push_back(&fm);
    visits.push_back(fm.visits);
  }
  std::sort(called.begin(), called.end(), [](const FunctionMetrics* a, const FunctionMetrics* b) {
    return a->demand_ns != b->demand_ns ? a->demand_ns > b->demand_ns : a->key < b->key;
  });
  for (size_t i = 0; i < called.size(); ++i) called[i]->demand_rank = i + 1;
  m.skew = hillEstimate(visits, hill);
  return m;
}

}  // namespace perfhat::handler::dynamic
