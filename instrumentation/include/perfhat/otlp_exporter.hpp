// OTLP/HTTP exporter (target perfhat::otlp): POSTs spans to <endpoint>/v1/traces, as
// application/x-protobuf (default) or application/json, and aggregate rows (the aggregate export
// mode's histograms, calls that overflowed the span path, the drop report) to
// <endpoint>/v1/aggregates (JSON): the two endpoints perfhat-handler serves (DESIGN §5). Phase-1
// aggregates go to <endpoint>/v1/metrics only if asked (OtlpOptions::export_metrics,
// PERFHAT_OTLP_METRICS=1: for an OTel Collector or a metrics backend).
// Linking perfhat::otlp lets perfhat::init() pick it from PERFHAT_ENDPOINT /
// OTEL_EXPORTER_OTLP_ENDPOINT; it can also be constructed directly.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "perfhat/exporter.hpp"

namespace perfhat::otlp {

struct OtlpOptions {
  std::string endpoint;  // base URL, e.g. http://127.0.0.1:4318 (a /v1/traces suffix is accepted)
  bool json = false;     // false: protobuf
  bool gzip = false;     // Content-Encoding: gzip (zlib level 1)
  std::vector<std::pair<std::string, std::string>> headers;
  double connect_timeout_s = 2;
  double timeout_s = 5;
  bool export_metrics = false;  // phase-1 aggregates to /v1/metrics (perfhat-handler: 404)

  // From a Config: endpoint, protocol, compression, OTEL_EXPORTER_OTLP_HEADERS ("k=v,k2=v2",
  // %-decoded) and PERFHAT_TOKEN (Authorization: Bearer). Returns false with `error` on a
  // malformed value.
  static bool from_config(const Config& c, OtlpOptions& out, std::string& error);
};

class OtlpHttpExporter final : public Exporter {
 public:
  explicit OtlpHttpExporter(OtlpOptions o);
  ~OtlpHttpExporter() override;
  ExportResult export_batch(const ExportBatch& batch) override;
  void start() override;     // loads the HTTP module and creates its client (no connection yet)
  void shutdown() override;  // closes the keep-alive connection
  std::string last_error() const override;
  // POST <endpoint>/v1/budget (perfhat-handler; an older one answers 404: permanent failure).
  ExportResult export_budget_status(const std::string& json) override;
  uint64_t metrics_rejected() const { return metrics_rejected_.load(); }

 private:
  // `status`, if given, receives the response's HTTP status (0: no response).
  ExportResult post(const std::string& path, std::string_view body, const char* content_type,
                    int* status = nullptr);
  struct Impl;
  std::unique_ptr<Impl> impl_;
  OtlpOptions opt_;
  std::atomic<uint64_t> metrics_rejected_{0};
  std::atomic<bool> metrics_enabled_{true};
  std::atomic<bool> aggregates_enabled_{true};  // false after /v1/aggregates answered 4xx
};

// Parses OTEL_EXPORTER_OTLP_HEADERS syntax.
bool parse_headers(const std::string& spec, std::vector<std::pair<std::string, std::string>>& out,
                   std::string& error);

}  // namespace perfhat::otlp
