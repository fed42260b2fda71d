#include "feedback-handler/http/rate_limiter.h"

#include <algorithm>
#include <chrono>

namespace perfhat::handler {

RateLimiter::RateLimiter(RateLimitOptions options, std::function<double()> now_s)
    : options_(options), now_s_(std::move(now_s)) {
  if (options_.burst <= 0) options_.burst = std::max(1.0, 2 * options_.rate_per_s);
  if (!now_s_) {
    now_s_ = [] {
      return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
          .count();
    };
  }
}

bool RateLimiter::allow(const std::string& client, double* retry_after_s) {
  if (options_.rate_per_s <= 0) return true;
  const double now = now_s_();
  MutexLock lock(mu_);
  if (buckets_.size() >= options_.max_clients && !buckets_.count(client)) {
    // Forget clients whose bucket has refilled: they lose nothing.
    std::erase_if(buckets_, [&](const auto& kv) {
      return kv.second.tokens + (now - kv.second.updated) * options_.rate_per_s >= options_.burst;
    });
  }
  auto [it, inserted] = buckets_.try_emplace(client, Bucket{options_.burst, now});
  Bucket& b = it->second;
  b.tokens = std::min(options_.burst, b.tokens + (now - b.updated) * options_.rate_per_s);
  b.updated = now;
  if (b.tokens >= 1) {
    b.tokens -= 1;
    return true;
  }
  if (retry_after_s) *retry_after_s = (1 - b.tokens) / options_.rate_per_s;
  return false;
}

bool RateLimiter::wouldAllow(const std::string& client, double* retry_after_s) {
  if (options_.rate_per_s <= 0) return true;
  const double now = now_s_();
  MutexLock lock(mu_);
  auto it = buckets_.find(client);
  if (it == buckets_.end()) return true;
  const double tokens = std::min(
      options_.burst, it->second.tokens + (now - it->second.updated) * options_.rate_per_s);
  if (tokens >= 1) return true;
  if (retry_after_s) *retry_after_s = (1 - tokens) / options_.rate_per_s;
  return false;
}

}  // namespace perfhat::handler
