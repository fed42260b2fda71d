#include "feedback-handler/http/metrics.h"

#include <cmath>
#include <sstream>

namespace perfhat::handler {

void Metrics::request(int status) {
  MutexLock lock(mu_);
  ++requests_[status];
}

void Metrics::storeWrite(double seconds) {
  MutexLock lock(mu_);
  for (size_t i = 0; i < kBounds.size(); ++i) {
    if (seconds <= kBounds[i]) ++write_buckets_[i];
  }
  ++write_count_;
  write_sum_ += seconds;
}

std::string Metrics::render(uint64_t sketches, uint64_t cursor, double data_age_s,
                            const std::vector<MetricSample>& extra) const {
  std::ostringstream o;
  o << "# HELP perfhat_handler_spans_ingested_total Spans aggregated into the store.\n"
       "# TYPE perfhat_handler_spans_ingested_total counter\n"
    << "perfhat_handler_spans_ingested_total " << spans_ingested_.load() << "\n"
    << "# HELP perfhat_handler_spans_rejected_total Spans refused (invalid, unidentifiable).\n"
       "# TYPE perfhat_handler_spans_rejected_total counter\n"
    << "perfhat_handler_spans_rejected_total " << spans_rejected_.load() << "\n"
    << "# HELP perfhat_handler_aggregate_rows_ingested_total Histogram rows (POST /v1/aggregates) "
       "merged into the store.\n"
       "# TYPE perfhat_handler_aggregate_rows_ingested_total counter\n"
    << "perfhat_handler_aggregate_rows_ingested_total " << rows_ingested_.load() << "\n"
    << "# HELP perfhat_handler_aggregate_rows_rejected_total Histogram rows refused "
       "(unidentifiable; a malformed body counts 1).\n"
       "# TYPE perfhat_handler_aggregate_rows_rejected_total counter\n"
    << "perfhat_handler_aggregate_rows_rejected_total " << rows_rejected_.load() << "\n"
    << "# HELP perfhat_handler_exporter_lost_calls_total Calls that instrumented services "
       "reported lost in export (weighted; `dropped` of POST /v1/aggregates).\n"
       "# TYPE perfhat_handler_exporter_lost_calls_total counter\n"
    << "perfhat_handler_exporter_lost_calls_total " << lost_calls_.load() << "\n"
    << "# HELP perfhat_handler_received_bytes_total Request body bytes received on /v1/traces.\n"
       "# TYPE perfhat_handler_received_bytes_total counter\n"
    << "perfhat_handler_received_bytes_total " << bytes_received_.load() << "\n"
    << "# HELP perfhat_handler_sketches Aggregate rows (sketches) in the store.\n"
       "# TYPE perfhat_handler_sketches gauge\n"
    << "perfhat_handler_sketches " << sketches << "\n"
    << "# HELP perfhat_handler_store_cursor Current change cursor of the store.\n"
       "# TYPE perfhat_handler_store_cursor gauge\n"
    << "perfhat_handler_store_cursor " << cursor << "\n";
  if (data_age_s >= 0) {
    o << "# HELP perfhat_handler_data_age_seconds Time since the oldest upstream last synced.\n"
         "# TYPE perfhat_handler_data_age_seconds gauge\n"
      << "perfhat_handler_data_age_seconds " << data_age_s << "\n";
  }
  for (const MetricSample& m : extra) {
    o << "# HELP " << m.name << " " << m.help << "\n# TYPE " << m.name << " " << m.type << "\n"
      << m.name << " ";
    // Counters print exactly (the stream's default precision would round large ones).
    if (m.value >= 0 && m.value < 9e15 && m.value == std::floor(m.value)) {
      o << static_cast<uint64_t>(m.value) << "\n";
    } else {
      o << m.value << "\n";
    }
  }
  MutexLock lock(mu_);
  o << "# HELP perfhat_handler_requests_total HTTP requests by status code.\n"
       "# TYPE perfhat_handler_requests_total counter\n";
  for (const auto& [status, n] : requests_) {
    o << "perfhat_handler_requests_total{status=\"" << status << "\"} " << n << "\n";
  }
  o << "# HELP perfhat_handler_store_write_seconds Durable batch commit latency.\n"
       "# TYPE perfhat_handler_store_write_seconds histogram\n";
  for (size_t i = 0; i < kBounds.size(); ++i) {
    o << "perfhat_handler_store_write_seconds_bucket{le=\"" << kBounds[i] << "\"} "
      << write_buckets_[i] << "\n";
  }
  o << "perfhat_handler_store_write_seconds_bucket{le=\"+Inf\"} " << write_count_ << "\n"
    << "perfhat_handler_store_write_seconds_sum " << write_sum_ << "\n"
    << "perfhat_handler_store_write_seconds_count " << write_count_ << "\n";
  return o.str();
}

}  // namespace perfhat::handler
