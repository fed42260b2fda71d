// The ingest path behind POST /v1/traces: aggregate on the request's thread (with the recent-span
// index for cross-request call sites), then a durable group commit. `IngestOptions` is the one
// place its tunables live.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "feedback-handler/ingest/aggregator.h"
#include "feedback-handler/ingest/group_commit.h"
#include "feedback-handler/ingest/span_index.h"
#include "feedback-handler/store/store.h"

namespace perfhat::handler {

struct IngestOptions {
  GroupCommitOptions commit;    // batching of durable commits
  SpanIndexOptions span_index;  // cross-request call-site linking
};

// One Prometheus sample (counter or gauge) for /metrics.
struct MetricSample {
  std::string name, help, type;
  double value = 0;
};

class IngestPipeline {
 public:
  IngestPipeline(Store& store, IngestOptions options = {});

  // Aggregates `request` and returns once its data is durable (or throws StoreError). The stats
  // are those of aggregate(); nothing is written when the request had no identifiable span.
  IngestStats ingest(const otlp::ExportRequest& request);

  std::vector<MetricSample> samples() const;

 private:
  SpanIndex recent_;
  GroupCommitter committer_;
};

}  // namespace perfhat::handler
