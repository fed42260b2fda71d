#include "feedback-handler/ingest/batch.h"

#include <functional>

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
  x1 += o.x1;
  x2 += o.x2;
  x3 += o.x3;
  if (o.line != 0) line = o.line;
}

}  // namespace perfhat::handler
