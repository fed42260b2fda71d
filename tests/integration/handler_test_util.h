// Shared pieces of the handler integration tests: span generation and HTTP helpers.
#pragma once

#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "common/feedback.h"
#include "feedback-handler/otlp/otlp.h"
#include "feedback-handler/otlp/otlp_encode.h"

namespace perfhat::testing {

inline uint64_t nowNs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
}

// Spans of one function with the given latencies, ending "now" (inside the default window).
inline otlp::ExportRequest spansFor(const std::string& function_name,
                                    const std::vector<double>& latencies_ns, uint64_t seed,
                                    const std::string& service = "svc",
                                    const std::string& version = "1.0") {
  otlp::ExportRequest r;
  r.resources.push_back({{"service.name", service},
                         {"service.version", version},
                         {"host.name", std::string("host-") + service}});
  std::mt19937_64 rng(seed);
  uint64_t start = nowNs() - 5'000'000'000ULL;
  for (double lat : latencies_ns) {
    otlp::Span s;
    s.trace_id.resize(16);
    s.span_id.resize(8);
    for (auto& c : s.trace_id) c = static_cast<char>(rng());
    for (auto& c : s.span_id) c = static_cast<char>(rng());
    s.span_id[0] = 1;  // never all-zero
    s.name = "op";
    s.start_unix_nano = start;
    s.end_unix_nano = start + static_cast<uint64_t>(lat);
    s.attributes = {{"code.function.name", function_name},
                    {"code.file.path", std::string("/src/app.cc")},
                    {"code.line.number", int64_t{42}}};
    r.spans.push_back(std::move(s));
  }
  return r;
}

inline std::vector<double> lognormalLatencies(size_t n, uint64_t seed, double median_ns = 2e6) {
  std::mt19937_64 rng(seed);
  std::lognormal_distribution<double> d(std::log(median_ns), 0.8);
  std::vector<double> v(n);
  for (auto& x : v) x = std::round(d(rng));
  return v;
}

// Exact quantile with the sketch's rank convention (lower of rank q·(n−1)).
inline double exactQuantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(std::floor(q * static_cast<double>(v.size() - 1)))];
}

inline httplib::Client client(const std::string& url, const std::string& token = "") {
  httplib::Client c(url);
  c.set_connection_timeout(std::chrono::seconds(10));
  c.set_read_timeout(std::chrono::seconds(30));
  if (!token.empty()) c.set_bearer_token_auth(token.c_str());
  return c;
}

inline BatchGetResponse batchGet(httplib::Client& c, const std::vector<std::string>& keys) {
  BatchGetRequest req;
  req.keys = keys;
  auto res = c.Post("/v1/feedback:batchGet", serialize(req), "application/json");
  if (!res || res->status != 200) {
    throw std::runtime_error("batchGet failed: " +
                             (res ? std::to_string(res->status) + " " + res->body : "no response"));
  }
  return parseBatchGetResponse(res->body);
}

}  // namespace perfhat::testing
