// Per-client token bucket (requests/s with a burst), answering 429 when a client exceeds it.
// The clock is injectable so tests drive refills deterministically.
#pragma once

#include <functional>
#include <string>
#include <unordered_map>

#include "common/thread_annotations.h"

namespace perfhat::handler {

struct RateLimitOptions {
  double rate_per_s = 0;        // sustained requests per second per client; 0 = unlimited
  double burst = 0;             // bucket size; 0 = 2 × rate
  size_t max_clients = 100000;  // table bound: idle full buckets are dropped beyond it
};

class RateLimiter {
 public:
  explicit RateLimiter(RateLimitOptions options, std::function<double()> now_s = {});
  // True when the request may proceed; false = 429. `retry_after_s` is set on refusal.
  bool allow(const std::string& client, double* retry_after_s = nullptr);
  // Whether allow() would pass now, without taking a token (failed-authentication limits check
  // before the attempt and take a token only when it fails).
  bool wouldAllow(const std::string& client, double* retry_after_s = nullptr);

 private:
  struct Bucket {
    double tokens;
    double updated;
  };
  RateLimitOptions options_;
  std::function<double()> now_s_;
  Mutex mu_;
  std::unordered_map<std::string, Bucket> buckets_ GUARDED_BY(mu_);
};

}  // namespace perfhat::handler
