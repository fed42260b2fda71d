#include "server/features/dynamic.h"

namespace perfhat::features {
namespace {

std::vector<NeighbourLink> links(const std::vector<DynamicNeighbour>& v, const DynamicView& view,
                                 size_t top) {
  std::vector<NeighbourLink> out;
  for (size_t i = 0; i < v.size() && i < top; ++i) {
    NeighbourLink l{v[i].key, v[i].count, std::nullopt};
    if (auto it = view.definitions.find(v[i].key); it != view.definitions.end()) {
      l.definition = it->second;
    }
    out.push_back(std::move(l));
  }
  return out;
}

}  // namespace

std::vector<std::string> dynamicKeys(const analysis::FunctionInfo& f) {
  std::vector<std::string> keys{f.key};
  for (const auto& part : f.matched) {
    if (part.key != f.key) keys.push_back(part.key);
  }
  return keys;
}

const DynamicMetrics* dynamicFor(const analysis::FunctionInfo& f, const DynamicView& v) {
  for (const auto& k : dynamicKeys(f)) {
    if (auto it = v.by_key.find(k); it != v.by_key.end()) return &it->second;
  }
  return nullptr;
}

std::vector<DynamicLens> dynamicLenses(const Snapshot& s, const DynamicView& v) {
  std::vector<DynamicLens> out;
  for (const auto& f : s.functions) {
    const DynamicMetrics* m = dynamicFor(f, v);
    if (!m || m->visits <= 0) continue;
    out.push_back({f.name_range, m->key, m->calls_per_hour, m->self_p50_ns, m->demand_rank,
                   m->fan_in, m->fan_out, v.stale});
  }
  return out;
}

std::optional<DynamicHover> dynamicHover(const Snapshot& s, Position p, const DynamicView& v,
                                         size_t top) {
  for (const auto& f : s.functions) {
    if (!f.name_range.contains(p)) continue;
    const DynamicMetrics* m = dynamicFor(f, v);
    if (!m) return std::nullopt;
    return DynamicHover{m->key,
                        m->visits,
                        m->window_to_s - m->window_from_s,
                        links(m->callers, v, top),
                        links(m->callees, v, top),
                        m->fan_in,
                        m->fan_out};
  }
  return std::nullopt;
}

std::vector<NeverCalled> neverCalled(const Snapshot& s, const DynamicView& v) {
  std::vector<NeverCalled> out;
  for (const auto& f : s.functions) {
    const DynamicMetrics* m = dynamicFor(f, v);
    if (!m || !m->never_called || m->visits > 0 || !coversWindow(*m)) continue;
    out.push_back({f.name_range, m->key, m->window_to_s - m->window_from_s});
  }
  return out;
}

}  // namespace perfhat::features
