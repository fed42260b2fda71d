#include "feedback-handler/store/batch.h"

#include <algorithm>
#include <functional>
#include <iterator>

namespace perfhat::handler {

size_t AggKeyHash::operator()(const AggKey& k) const noexcept {
  std::hash<std::string> h;
  size_t v = h(k.key);
  auto mix = [&v](size_t x) { v ^= x + 0x9e3779b97f4a7c15ULL + (v << 6) + (v >> 2); };
  mix(static_cast<size_t>(k.kind));
  mix(h(k.sub));
  mix(std::hash<int64_t>()(k.bucket));
  mix(h(k.service));
  mix(h(k.version));
  mix(h(k.env));
  mix(h(k.origin));
  return v;
}

void AggValue::merge(const AggValue& o) {
  sketch.merge(o.sketch);
  addCount(x1, o.x1);
  addSum(x2, o.x2);
  addCount(x3, o.x3);
  if (o.line != 0) line = o.line;
}

void Batch::absorb(Batch&& later) {
  if (aggregates.empty()) {
    aggregates = std::move(later.aggregates);
  } else {
    // New rows move over as whole nodes (no key copy, no allocation); existing ones merge.
    for (auto it = later.aggregates.begin(); it != later.aggregates.end();) {
      auto next = std::next(it);
      if (auto mine = aggregates.find(it->first); mine != aggregates.end()) {
        mine->second.merge(it->second);
      } else {
        aggregates.insert(later.aggregates.extract(it));
      }
      it = next;
    }
  }
  for (auto& [key, info] : later.functions) {
    auto [it, inserted] = functions.try_emplace(key, info);
    if (inserted) continue;
    FunctionInfo& f = it->second;
    if (!info.mangled.empty()) f.mangled = std::move(info.mangled);
    if (!info.file.empty()) f.file = std::move(info.file);
    if (info.line != 0) f.line = info.line;
    f.last_seen_ns = std::max(f.last_seen_ns, info.last_seen_ns);
  }
  for (auto& [kh, seen] : later.hosts) {
    int64_t& t = hosts[kh];
    t = std::max(t, seen);
  }
  for (auto& [name, value] : later.meta) meta[name] = value;
}

}  // namespace perfhat::handler
