// FeedbackProvider::dynamic: the dynamic-metrics read behind the editor's call-graph lens, hover
// and never-called diagnostic, cached beside batchGet's entries.
#include <unordered_set>

#include "server/feedback/provider.h"

namespace perfhat::feedback {
namespace {

constexpr std::chrono::seconds kDynamicRetryAfter{10};

}  // namespace

DynamicLookup FeedbackProvider::dynamic(const std::vector<std::string>& keys, size_t max_keys,
                                        bool cache_only) {
  DynamicLookup out;
  std::vector<std::string> wanted;
  {
    std::unordered_set<std::string_view> seen;
    for (const auto& k : keys) {
      if (wanted.size() >= max_keys) break;
      if (!k.empty() && seen.insert(k).second) wanted.push_back(k);
    }
  }
  std::vector<std::string> missing;
  {
    MutexLock lock(mu_);
    if (dynamic_unsupported_at_ && clock_.now() - *dynamic_unsupported_at_ < cache_.options().ttl) {
      out.unsupported = true;
      return out;
    }
    const bool resting = cache_only || (dynamic_failed_at_ &&
                                        clock_.now() - *dynamic_failed_at_ < kDynamicRetryAfter);
    for (const auto& k : wanted) {
      auto hit = dynamic_.get(k);
      if (!resting && (!hit.value || hit.expired)) missing.push_back(k);
      if (resting && (!hit.value || hit.expired)) out.stale = true;
    }
  }
  // The source is asked without the lock: the cache keeps serving other threads meanwhile.
  std::vector<std::pair<std::string, DynamicResult>> answers;
  for (const auto& k : missing) {
    DynamicResult r = source_->dynamicMetrics(k);
    ++out.requests;
    const bool stop = !r.ok();
    if (r.unsupported) out.unsupported = true;
    if (!r.ok() && !r.unsupported) {
      out.status = r.status;
      out.error = r.error;
    }
    answers.emplace_back(k, std::move(r));
    if (stop) break;  // a down or old handler: do not ask it once per function
  }
  MutexLock lock(mu_);
  if (out.unsupported) {
    dynamic_unsupported_at_ = clock_.now();
    return out;
  }
  dynamic_unsupported_at_.reset();
  if (out.status != FetchStatus::Ok) dynamic_failed_at_ = clock_.now();
  if (out.status == FetchStatus::Ok && out.requests > 0) dynamic_failed_at_.reset();
  for (auto& [k, r] : answers) {
    if (r.ok()) dynamic_.put(k, std::move(r.metrics));
  }
  for (const auto& k : wanted) {
    auto hit = dynamic_.get(k);
    if (!hit.value) continue;  // never answered (the source failed before it)
    out.stale = out.stale || hit.expired;
    if (*hit.value) out.metrics.push_back(**hit.value);
  }
  return out;
}

}  // namespace perfhat::feedback
