// The feedback the server hands to the analysis: an LRU cache (size + TTL) in front of a
// FeedbackSource, filled with ONE bulk request per translation unit for the keys it misses,
// invalidated by the handler's change feed. When the source fails, expired entries are still
// served and the result is marked stale (DESIGN §6: never block the editor, keep hints working).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "server/feedback/clock.h"
#include "server/feedback/lru_cache.h"
#include "server/feedback/source.h"

#include "common/thread_annotations.h"

namespace perfhat::feedback {

struct Lookup {
  std::vector<FeedbackItem> items;  // deduplicated by key
  bool stale = false;         // some data came from expired cache entries, or none could be fetched
  bool fetched = false;       // a request went to the source
  size_t requested_keys = 0;  // keys in that request
  size_t cache_hits = 0;
  FetchStatus status = FetchStatus::Ok;  // of the request, if any
  std::string error;
  double fetch_ms = 0;
};

// Dynamic metrics of several functions (FeedbackProvider::dynamic).
struct DynamicLookup {
  std::vector<DynamicMetrics> metrics;  // the functions the handler knows (probed), in key order
  bool unsupported = false;             // the source has none: show nothing, report nothing
  bool stale = false;                   // some came from expired entries (the source failed)
  size_t requests = 0;                  // reads sent to the source
  FetchStatus status = FetchStatus::Ok;
  std::string error;
};

struct ProviderCounters {
  size_t lookups = 0;
  size_t hits = 0;
  size_t misses = 0;
  size_t requests = 0;
  size_t failures = 0;
};

class FeedbackProvider {
 public:
  FeedbackProvider(std::shared_ptr<FeedbackSource> source, CacheOptions options,
                   const Clock& clock = SteadyClock::instance());

  // Everything known for `keys`; at most one request to the source.
  Lookup get(const std::vector<std::string>& keys);
  // Asks the source what changed and drops those keys from the cache (all of them when the
  // source cannot tell). Returns the keys that changed (empty and `all` false: nothing) and, in
  // `invalidated`, the requested keys whose entries were dropped. `wait_ms` > 0 long-polls the
  // source (FeedbackSource::waitChanges); the cache is not locked while waiting.
  ChangesResult poll(int wait_ms = 0);
  // Makes a poll() long-polling in another thread return soon (shutdown, reconfiguration).
  void cancelPoll() { source_->cancelWait(); }
  void cancelFetch() { source_->cancelFetch(); }
  // What the cache holds for `keys`, fresh or expired, without asking the source; `stale` is
  // set when some key is expired or missing, and `requested_keys` counts those.
  Lookup cached(const std::vector<std::string>& keys);
  // perfhat.refresh: expire everything so the next lookup refetches (values stay as fallback).
  void expireAll();
  void setCacheOptions(CacheOptions options);

  // Dynamic metrics of `keys` (at most `max_keys` of them, in order): from the cache while
  // fresh, else one read per key from the source. The first failure ends the reads (the rest
  // come from expired entries, if any) and rests the source for 10 s; a source without dynamic
  // metrics is asked again only after the cache's TTL. Cached like batchGet (size + TTL), and
  // dropped by poll() for the keys that changed.
  // `cache_only`: answer from the cache (expired entries included, marked stale) without asking
  // the source, while a batchGet to it is still in flight.
  DynamicLookup dynamic(const std::vector<std::string>& keys, size_t max_keys = 200,
                        bool cache_only = false);
  // The call graph around `key` as dot (not cached: asked for by a command).
  DynamicResult dynamicGraph(const std::string& key, int depth) {
    return source_->dynamicGraph(key, depth);
  }
  BudgetResult budgetStatus(const std::string& service) { return source_->budgetStatus(service); }

  ProviderCounters counters() const;
  size_t cacheSize() const;
  const FeedbackSource& source() const { return *source_; }

 private:
  std::shared_ptr<FeedbackSource> source_;
  mutable Mutex mu_;
  // Requested key -> the items the source returned for it (empty: known to have no data).
  LruCache<std::vector<FeedbackItem>> cache_ GUARDED_BY(mu_);
  std::string cursor_ GUARDED_BY(mu_);
  const Clock& clock_;
  // Requested key -> its dynamic metrics (empty: the handler has never seen the function).
  LruCache<std::optional<DynamicMetrics>> dynamic_ GUARDED_BY(mu_);
  // When the source last said it has no dynamic metrics (an older handler); asked again after
  // the TTL, so upgrading the handler brings the lenses back without a restart.
  std::optional<Clock::time_point> dynamic_unsupported_at_ GUARDED_BY(mu_);
  // When a dynamic read last failed: the source is not asked again for kDynamicRetryAfter (the
  // reads run on the analysis worker; a hanging handler must not cost every rebuild a timeout).
  std::optional<Clock::time_point> dynamic_failed_at_ GUARDED_BY(mu_);
  ProviderCounters counters_ GUARDED_BY(mu_);
};

}  // namespace perfhat::feedback
