// The handler's own metrics in Prometheus text exposition format (GET /metrics).
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "feedback-handler/ingest/pipeline.h"

#include "common/thread_annotations.h"

namespace perfhat::handler {

class Metrics {
 public:
  void spansIngested(uint64_t n) { spans_ingested_ += n; }
  void spansRejected(uint64_t n) { spans_rejected_ += n; }
  void bytesReceived(uint64_t n) { bytes_received_ += n; }
  // POST /v1/aggregates: rows merged, and rows refused (no identity, or in a malformed body).
  void aggregateRows(uint64_t ingested, uint64_t rejected) {
    rows_ingested_ += ingested;
    rows_rejected_ += rejected;
  }
  // Weighted calls a service's exporter reported lost (`dropped.calls` of POST /v1/aggregates).
  void exporterLostCalls(double calls) {
    if (calls > 0) lost_calls_ += static_cast<uint64_t>(std::min(calls, 1e18) + 0.5);
  }
  void request(int status);
  void storeWrite(double seconds);
  // `sketches` and `cursor` are sampled from the store by the caller; `extra` are further samples
  // (ingest pipeline internals).
  std::string render(uint64_t sketches, uint64_t cursor, double data_age_s,
                     const std::vector<MetricSample>& extra = {}) const;

 private:
  static constexpr std::array<double, 10> kBounds = {0.0005, 0.001, 0.0025, 0.005, 0.01,
                                                     0.025,  0.05,  0.1,    0.25,  1.0};
  std::atomic<uint64_t> spans_ingested_{0}, spans_rejected_{0}, bytes_received_{0};
  std::atomic<uint64_t> rows_ingested_{0}, rows_rejected_{0}, lost_calls_{0};
  mutable Mutex mu_;
  std::map<int, uint64_t> requests_ GUARDED_BY(mu_);
  std::array<uint64_t, kBounds.size()> write_buckets_ GUARDED_BY(mu_){};
  uint64_t write_count_ GUARDED_BY(mu_) = 0;
  double write_sum_ GUARDED_BY(mu_) = 0;
};

}  // namespace perfhat::handler
