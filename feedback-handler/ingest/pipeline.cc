#include "feedback-handler/ingest/pipeline.h"

namespace perfhat::handler {

IngestPipeline::IngestPipeline(Store& store, IngestOptions options)
    : recent_(std::move(options.span_index)), committer_(store, options.commit) {}

IngestStats IngestPipeline::ingest(const otlp::ExportRequest& request) {
  Batch batch;
  IngestStats st = aggregate(request, batch, &recent_);
  if (!batch.empty()) committer_.commit(std::move(batch));
  return st;
}

std::vector<MetricSample> IngestPipeline::samples() const {
  const SpanIndex::Counters s = recent_.counters();
  const GroupCommitter::Counters c = committer_.counters();
  auto d = [](uint64_t v) { return static_cast<double>(v); };
  return {
      {"perfhat_handler_commits_total", "Durable ingest transactions (group commits).", "counter",
       d(c.commits)},
      {"perfhat_handler_committed_batches_total",
       "Ingest requests committed (÷ commits = group size).", "counter", d(c.batches)},
      {"perfhat_handler_span_index_spans", "Recent spans remembered for cross-request call sites.",
       "gauge", d(s.spans)},
      {"perfhat_handler_span_index_waiting",
       "Child spans waiting for a parent from a later request.", "gauge", d(s.waiting)},
      {"perfhat_handler_span_index_linked_total", "Call-site edges linked across export requests.",
       "counter", d(s.linked)},
      {"perfhat_handler_span_index_spans_evicted_total",
       "Recent spans dropped for capacity before their TTL.", "counter", d(s.spans_evicted)},
      {"perfhat_handler_span_index_spans_expired_total", "Recent spans dropped at their TTL.",
       "counter", d(s.spans_expired)},
      {"perfhat_handler_span_index_waiting_evicted_total",
       "Waiting children dropped for capacity (their edge is not recorded).", "counter",
       d(s.waiting_evicted)},
      {"perfhat_handler_span_index_waiting_expired_total",
       "Waiting children whose parent never arrived within the TTL (edge not recorded).", "counter",
       d(s.waiting_expired)},
  };
}

}  // namespace perfhat::handler
