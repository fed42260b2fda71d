#include "feedback-handler/ingest/variant_traffic.h"

#include "feedback-handler/variants/exposure.h"

namespace perfhat::handler {

void TrafficCounter::into(Batch& batch, const std::vector<ResourceDims>& resources) const {
  constexpr uint64_t kBucketBits = (uint64_t{1} << 40) - 1;
  for (const auto& [k, v] : counts_) {
    const uint64_t r = k >> 40;
    if (r >= resources.size()) continue;
    // Buckets are minutes since the epoch: far below 2^40, so the xor above kept them whole.
    addTraffic(batch, resources[r], static_cast<int64_t>(k & kBucketBits), v.first, v.second);
  }
}

void addTraffic(Batch& batch, const ResourceDims& dims, int64_t bucket, double requests,
                double calls) {
  if (dims.release.empty()) return;
  std::string sub = trafficSub(dims.release, dims.variant, dims.replica);
  if (sub.empty()) return;
  AggValue& v = batch.aggregates[AggKey{AggKind::kTraffic, "", std::move(sub), bucket, dims.service,
                                        dims.version, dims.env, ""}];
  AggValue::addCount(v.x1, requests);
  AggValue::addCount(v.x2, calls);
}

}  // namespace perfhat::handler
