#include "perfhat/otlp_exporter.hpp"

#include <cctype>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "otlp_encode.h"
#include "otlp_http_loader.h"
#include "thread_annotations.h"

namespace perfhat::otlp {
namespace {

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.pop_back();
  size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  return s.substr(i);
}

bool percent_decode(const std::string& in, std::string& out) {
  out.clear();
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '%') {
      if (i + 2 >= in.size() || !std::isxdigit(static_cast<unsigned char>(in[i + 1])) ||
          !std::isxdigit(static_cast<unsigned char>(in[i + 2]))) {
        return false;
      }
      out += static_cast<char>(std::stoi(in.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += in[i];
    }
  }
  return true;
}

}  // namespace

bool parse_headers(const std::string& spec, std::vector<std::pair<std::string, std::string>>& out,
                   std::string& error) {
  size_t start = 0;
  while (start < spec.size()) {
    size_t end = spec.find(',', start);
    if (end == std::string::npos) end = spec.size();
    std::string item = trim(spec.substr(start, end - start));
    start = end + 1;
    if (item.empty()) continue;
    size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      error = "OTEL_EXPORTER_OTLP_HEADERS: expected key=value, found '" + item + "'";
      return false;
    }
    std::string k, v;
    if (!percent_decode(trim(item.substr(0, eq)), k) ||
        !percent_decode(trim(item.substr(eq + 1)), v)) {
      error = "OTEL_EXPORTER_OTLP_HEADERS: bad %-escape in '" + item + "'";
      return false;
    }
    out.emplace_back(std::move(k), std::move(v));
  }
  return true;
}

bool OtlpOptions::from_config(const Config& c, OtlpOptions& out, std::string& error) {
  out.endpoint = c.endpoint;
  out.export_metrics = c.otlp_metrics;
  out.json = c.protocol == "http/json";
  if (!out.json && c.protocol != "http/protobuf") {
    error = "unsupported OTLP protocol '" + c.protocol + "' (http/protobuf, http/json)";
    return false;
  }
  if (c.compression == "gzip") {
    out.gzip = true;
  } else if (c.compression != "none" && !c.compression.empty()) {
    error = "unsupported OTLP compression '" + c.compression + "' (gzip, none)";
    return false;
  }
  if (!parse_headers(c.headers, out.headers, error)) return false;
  if (!c.token.empty()) out.headers.emplace_back("Authorization", "Bearer " + c.token);
  if (out.endpoint.rfind("http://", 0) != 0 && out.endpoint.rfind("https://", 0) != 0) {
    error = "endpoint must start with http:// or https://: '" + out.endpoint + "'";
    return false;
  }
  return true;
}

constexpr const char* kJson = "application/json";
constexpr const char* kProtobuf = "application/x-protobuf";

// The transport is the module's (otlp_http_loader.h), loaded at the first request: a process
// that never sends anything maps none of cpp-httplib, OpenSSL, Brotli or zlib.
struct OtlpHttpExporter::Impl {
  // Serializes the requests: the module's client and the last outcome are shared.
  detail::Mutex mu;
  std::string base_url;  // scheme://host[:port]
  std::string prefix;    // path prefix of the endpoint (usually empty)
  std::string traces_path, metrics_path, aggregates_path;
  std::vector<std::pair<std::string, std::string>> headers;  // with Content-Encoding if gzip
  double connect_timeout_s = 2, timeout_s = 5;
  bool gzip = false;
  const perfhat_http_api* api PERFHAT_GUARDED_BY(mu) = nullptr;
  void* client PERFHAT_GUARDED_BY(mu) = nullptr;
  bool unavailable PERFHAT_GUARDED_BY(mu) = false;  // the module or the client failed for good
  std::string last_error PERFHAT_GUARDED_BY(mu);

  ~Impl() {
    if (client != nullptr) api->destroy(client);
  }

  // The module's client, created at the first request. False (with last_error) when the module
  // cannot be loaded: said once on stderr, and every request then fails for good, so the engine
  // drops and counts what it would have sent.
  bool connect() PERFHAT_REQUIRES(mu) {
    if (client != nullptr) return true;
    if (unavailable) return false;
    const HttpModule& m = http_module();
    std::string why = m.error;
    if (m.api != nullptr) {
      std::vector<perfhat_http_header> h;
      for (const auto& [k, v] : headers) h.push_back({k.c_str(), v.c_str()});
      perfhat_http_client_options o{base_url.c_str(),  h.data(),  h.size(),
                                    connect_timeout_s, timeout_s, gzip ? 1 : 0};
      char err[256] = {};
      client = m.api->create(&o, err, sizeof err);
      if (client != nullptr) {
        api = m.api;
        return true;
      }
      why = m.path + ": " + err;
    }
    unavailable = true;
    last_error = "OTLP/HTTP module not loaded (" + why + ")";
    std::fprintf(stderr, "perfhat: %s; nothing is exported, lost data is counted\n",
                 last_error.c_str());
    return false;
  }
};

OtlpHttpExporter::OtlpHttpExporter(OtlpOptions o) : impl_(new Impl), opt_(std::move(o)) {
  std::string ep = opt_.endpoint;
  for (const char* suffix : {"/v1/traces", "/v1/metrics", "/v1/aggregates"}) {
    size_t n = std::strlen(suffix);
    if (ep.size() >= n && ep.compare(ep.size() - n, n, suffix) == 0) ep.resize(ep.size() - n);
  }
  while (!ep.empty() && ep.back() == '/') ep.pop_back();
  size_t scheme_end = ep.find("://");
  size_t path_start =
      scheme_end == std::string::npos ? std::string::npos : ep.find('/', scheme_end + 3);
  impl_->base_url = ep.substr(0, path_start);
  if (path_start != std::string::npos) impl_->prefix = ep.substr(path_start);
  impl_->traces_path = impl_->prefix + "/v1/traces";
  impl_->metrics_path = impl_->prefix + "/v1/metrics";
  impl_->aggregates_path = impl_->prefix + "/v1/aggregates";
  impl_->headers = opt_.headers;
  if (opt_.gzip) impl_->headers.emplace_back("Content-Encoding", "gzip");
  impl_->gzip = opt_.gzip;
  impl_->connect_timeout_s = opt_.connect_timeout_s;
  impl_->timeout_s = opt_.timeout_s;
  metrics_enabled_.store(opt_.export_metrics);
}

OtlpHttpExporter::~OtlpHttpExporter() = default;

void OtlpHttpExporter::start() {
  detail::Lock l(impl_->mu);
  impl_->connect();  // a failure is said once and kept: requests then fail for good
}

void OtlpHttpExporter::shutdown() {
  detail::Lock l(impl_->mu);
  if (impl_->client != nullptr) impl_->api->stop(impl_->client);
}

std::string OtlpHttpExporter::last_error() const {
  detail::Lock l(impl_->mu);
  return impl_->last_error;
}

ExportResult OtlpHttpExporter::post(const std::string& path, std::string_view body,
                                    const char* ctype, int* status) {
  detail::Lock l(impl_->mu);
  if (status != nullptr) *status = 0;
  if (!impl_->connect()) return ExportResult::kPermanentFailure;
  char err[256] = {};
  const int st = impl_->api->post(impl_->client, path.c_str(), body.data(), body.size(), ctype, err,
                                  sizeof err);
  if (st == PERFHAT_HTTP_LOCAL_FAILURE) {
    impl_->last_error = "POST " + path + ": " + err;
    return ExportResult::kPermanentFailure;
  }
  if (st == PERFHAT_HTTP_NO_RESPONSE) {
    impl_->last_error = "POST " + path + ": " + err;
    return ExportResult::kRetryableFailure;
  }
  if (status != nullptr) *status = st;
  if (st >= 200 && st < 300) return ExportResult::kSuccess;
  impl_->last_error = "POST " + path + ": HTTP " + std::to_string(st) +
                      (err[0] == '\0' ? "" : " " + std::string(err));
  // OTLP/HTTP: 429 and 5xx are transient; other statuses mean the payload will never be taken.
  if (st == 429 || st >= 500) return ExportResult::kRetryableFailure;
  return ExportResult::kPermanentFailure;
}

ExportResult OtlpHttpExporter::export_budget_status(const std::string& json) {
  return post(impl_->prefix + "/v1/budget", json, kJson);
}

ExportResult OtlpHttpExporter::export_batch(const ExportBatch& batch) {
  ExportResult r = ExportResult::kSuccess;
  if (!batch.spans.empty()) {
    if (opt_.json) {
      r = post(impl_->traces_path, traces_json(batch), kJson);
    } else {
      r = post(impl_->traces_path, traces_protobuf_view(batch), kProtobuf);
    }
    if (r != ExportResult::kSuccess) return r;
  }
  if (!batch.histograms.empty() || batch.dropped.any()) {
    // A receiver without /v1/aggregates (404/405: an OTel Collector) is told once, on stderr,
    // and not asked again: the engine counts the rows it cannot send.
    if (!aggregates_enabled_.load()) return ExportResult::kPermanentFailure;
    // Deltas: the engine retries the batch on a retryable failure and counts it lost otherwise.
    // This request's own status: a budget report posted meanwhile from another thread must
    // not decide it.
    int status = 0;
    r = post(impl_->aggregates_path, aggregates_json(batch), kJson, &status);
    const bool missing = r == ExportResult::kPermanentFailure && (status == 404 || status == 405);
    if (missing && aggregates_enabled_.exchange(false)) {
      std::fprintf(stderr,
                   "perfhat: %s: the receiver does not take aggregate rows; calls that overflow "
                   "the span path are counted (perfhat::counters()) but not sent\n",
                   last_error().c_str());
    }
    if (r != ExportResult::kSuccess) return r;
  }
  if (!batch.aggregates.empty() && metrics_enabled_.load()) {
    ExportResult m = opt_.json ? post(impl_->metrics_path, metrics_json(batch), kJson)
                               : post(impl_->metrics_path, metrics_protobuf(batch), kProtobuf);
    if (m == ExportResult::kPermanentFailure) {
      // A traces-only receiver (404/405/415): stop sending metrics, spans are unaffected.
      metrics_enabled_ = false;
      metrics_rejected_.fetch_add(1);
    } else if (m == ExportResult::kRetryableFailure) {
      metrics_rejected_.fetch_add(1);  // aggregates are deltas: lost, counted, not retried
    }
  }
  return r;
}

}  // namespace perfhat::otlp

// Factory the core library looks up (weak reference) when an endpoint is configured.
extern "C" perfhat::Exporter* perfhat_otlp_create(const perfhat::Config& cfg, std::string* error) {
  perfhat::otlp::OtlpOptions o;
  std::string e;
  if (!perfhat::otlp::OtlpOptions::from_config(cfg, o, e)) {
    if (error) *error = e;
    return nullptr;
  }
  return new perfhat::otlp::OtlpHttpExporter(std::move(o));
}
