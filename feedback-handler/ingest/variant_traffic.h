// Ingest side of exposure (feedback-handler/variants/exposure.h): the traffic each release variant
// served, per minute, as aggregate rows of kind AggKind::kTraffic (key "", sub trafficSub(),
// x1 = weighted request roots, x2 = weighted records).
#pragma once

#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "feedback-handler/ingest/aggregator.h"
#include "feedback-handler/store/batch.h"

namespace perfhat::handler {

class TrafficCounter {
 public:
  // One record of resource `r` (an index into the request's resources) in minute `bucket`.
  void add(uint32_t r, int64_t bucket, bool request, double weight) {
    auto& [requests, calls] =
        counts_[(static_cast<uint64_t>(r) << 40) ^ static_cast<uint64_t>(bucket)];
    if (request) AggValue::addCount(requests, weight);
    AggValue::addCount(calls, weight);
  }
  // The rows of the resources that run a variant, into `batch`.
  void into(Batch& batch, const std::vector<ResourceDims>& resources) const;

 private:
  std::unordered_map<uint64_t, std::pair<double, double>> counts_;
};

// One traffic row of `dims` (no row when it runs no variant).
void addTraffic(Batch& batch, const ResourceDims& dims, int64_t bucket, double requests,
                double calls);

}  // namespace perfhat::handler
