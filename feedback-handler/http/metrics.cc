#include "feedback-handler/http/metrics.h"

#include <cmath>
#include <sstream>
#include <string_view>

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

namespace {

// A metric's HELP and TYPE lines (Prometheus text format), written the same way for every metric.
void header(std::ostringstream& o, std::string_view name, std::string_view help,
            std::string_view type) {
  o << "# HELP " << name << " " << help << "\n# TYPE " << name << " " << type << "\n";
}

// A metric of one unlabelled sample.
template <class T>
void single(std::ostringstream& o, std::string_view name, std::string_view help,
            std::string_view type, T value) {
  header(o, name, help, type);
  o << name << " " << value << "\n";
}

}  // namespace

std::string Metrics::render(uint64_t sketches, uint64_t cursor, double data_age_s,
                            const std::vector<MetricSample>& extra) const {
  std::ostringstream o;
  single(o, "perfhat_handler_spans_ingested_total", "Spans aggregated into the store.", "counter",
         spans_ingested_.load());
  single(o, "perfhat_handler_spans_rejected_total", "Spans refused (invalid, unidentifiable).",
         "counter", spans_rejected_.load());
  single(o, "perfhat_handler_aggregate_rows_ingested_total",
         "Histogram rows (POST /v1/aggregates) merged into the store.", "counter",
         rows_ingested_.load());
  single(o, "perfhat_handler_aggregate_rows_rejected_total",
         "Histogram rows refused (unidentifiable; a malformed body counts 1).", "counter",
         rows_rejected_.load());
  single(o, "perfhat_handler_exporter_lost_calls_total",
         "Calls that instrumented services reported lost in export (weighted; `dropped` of POST "
         "/v1/aggregates).",
         "counter", lost_calls_.load());
  single(o, "perfhat_handler_received_bytes_total", "Request body bytes received on /v1/traces.",
         "counter", bytes_received_.load());
  single(o, "perfhat_handler_sketches", "Aggregate rows (sketches) in the store.", "gauge",
         sketches);
  single(o, "perfhat_handler_store_cursor", "Current change cursor of the store.", "gauge", cursor);
  if (data_age_s >= 0) {
    single(o, "perfhat_handler_data_age_seconds", "Time since the oldest upstream last synced.",
           "gauge", data_age_s);
  }
  for (const MetricSample& m : extra) {
    header(o, m.name, m.help, m.type);
    o << m.name << " ";
    // Counters print exactly (the stream's default precision would round large ones).
    if (m.value >= 0 && m.value < 9e15 && m.value == std::floor(m.value)) {
      o << static_cast<uint64_t>(m.value) << "\n";
    } else {
      o << m.value << "\n";
    }
  }
  MutexLock lock(mu_);
  header(o, "perfhat_handler_requests_total", "HTTP requests by status code.", "counter");
  for (const auto& [status, n] : requests_) {
    o << "perfhat_handler_requests_total{status=\"" << status << "\"} " << n << "\n";
  }
  header(o, "perfhat_handler_store_write_seconds", "Durable batch commit latency.", "histogram");
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
