// What the control group's dashboard shows, read from a perfhat handler's read API (DESIGN §5):
// the function keys from GET /v1/changes (paged by cursor from 0, then incrementally), their
// statistics from POST /v1/feedback:batchGet with a time range — the per-function average
// execution times the paper's Kibana dashboards showed.
#pragma once

#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace perfhat::experiment {

// RFC 3339 UTC, second precision: "2026-11-25T20:00:00Z".
std::string rfc3339(int64_t unix_seconds);

inline constexpr size_t kDashboardKeysPerBatch = 5000;  // below the handler's max_batch_keys
inline constexpr int kDashboardMaxBuckets = 240;
inline constexpr int64_t kDashboardMaxMinutes = 90 * 24 * 60;

class HandlerReader {
 public:
  HandlerReader(std::string url, std::string token);

  // Every key the handler has data for (new ones fetched since the last call). Throws
  // std::runtime_error when the handler does not answer or answers an error.
  std::vector<std::string> keys();

  // {"window":{"from","to"},"functions":[{"key","count","errors","mean_ms","p50_ms","p95_ms"}]}
  // over the last `minutes` before `now`, sorted by mean time, slowest first.
  nlohmann::json functions(int64_t now_s, int64_t minutes);

  // {"key","series":[{"from","to","count","mean_ms"}]}: `buckets` (at most one per minute)
  // consecutive windows on minute boundaries covering the last `minutes` up to the end of the
  // current minute (mean_ms null when the function was not called).
  nlohmann::json series(const std::string& key, int64_t now_s, int64_t minutes, int buckets);

 private:
  std::string post(const std::string& path, const std::string& body);
  std::string url_, token_;
  std::mutex mu_;
  uint64_t cursor_ = 0;          // GUARDED_BY(mu_)
  std::set<std::string> known_;  // GUARDED_BY(mu_)
};

}  // namespace perfhat::experiment
