#include "server/feedback/provider.h"

#include <chrono>
#include <unordered_set>

#include "common/called_from.h"
#include "common/function_key.h"

namespace perfhat::feedback {
namespace {

// The items of several cache entries, each once: two keys (a signature and a mangled name, or
// two overloads matched by name) may hold the same stored function.
struct UniqueItems {
  std::vector<FeedbackItem>& out;
  std::unordered_set<std::string> seen;
  void add(const std::vector<FeedbackItem>& items) {
    for (const auto& it : items) {
      if (seen.insert(it.key).second) out.push_back(it);
    }
  }
};

// fn(key) for each non-empty key of `keys` once, in order.
template <typename Fn>
void forEachDistinctKey(const std::vector<std::string>& keys, Fn&& fn) {
  std::unordered_set<std::string_view> asked;
  for (const auto& k : keys) {
    if (!k.empty() && asked.insert(k).second) fn(k);
  }
}

}  // namespace

FeedbackProvider::FeedbackProvider(std::shared_ptr<FeedbackSource> source, CacheOptions options,
                                   const Clock& clock)
    : source_(std::move(source)), cache_(options, clock), clock_(clock), dynamic_(options, clock) {}

Lookup FeedbackProvider::cached(const std::vector<std::string>& keys) {
  MutexLock lock(mu_);
  Lookup out;
  UniqueItems items{out.items};
  auto* cache = &cache_;  // the lambda runs here, under mu_
  forEachDistinctKey(keys, [&](const std::string& k) {
    auto hit = cache->get(k);
    ++(hit.value && !hit.expired ? out.cache_hits : out.requested_keys);
    if (hit.value) items.add(*hit.value);
  });
  out.stale = out.requested_keys > 0;
  return out;
}

Lookup FeedbackProvider::get(const std::vector<std::string>& keys) {
  Lookup out;
  UniqueItems items{out.items};
  std::vector<std::string> missing;
  std::vector<std::string> expired;  // kept as a fallback if the fetch fails
  {
    MutexLock lock(mu_);
    ++counters_.lookups;
    auto* cache = &cache_;  // the lambda runs here, under mu_
    forEachDistinctKey(keys, [&](const std::string& k) {
      auto hit = cache->get(k);
      if (hit.value && !hit.expired) {
        ++out.cache_hits;
        items.add(*hit.value);
      } else {
        missing.push_back(k);
        if (hit.value) expired.push_back(k);
      }
    });
    counters_.hits += out.cache_hits;
    counters_.misses += missing.size();
    if (missing.empty()) return out;
    ++counters_.requests;
  }

  out.fetched = true;
  out.requested_keys = missing.size();
  // The cache is not locked while the source answers: cached() serves the editor meanwhile.
  auto t0 = std::chrono::steady_clock::now();
  FetchResult r = source_->batchGet(missing);
  out.fetch_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  out.status = r.status;
  MutexLock lock(mu_);
  if (!r.ok()) {
    ++counters_.failures;
    out.error = r.error;
    out.stale = true;
    for (const auto& k : expired) {
      if (auto hit = cache_.get(k); hit.value) items.add(*hit.value);
    }
    return out;
  }
  if (cursor_.empty()) cursor_ = r.response.cursor;
  // Map the returned items back to the keys we asked for: exact key, mangled name, or (for
  // name-level matching in the analysis) the same qualified name.
  for (const auto& k : missing) {
    std::vector<FeedbackItem> for_key;
    if (k.rfind(kVirtualKeyPrefix, 0) == 0) {
      // The implementations of a virtual function: every item of the same member signature.
      std::string m = memberSignature(normalizeFunctionKey(k.substr(kVirtualKeyPrefix.size())));
      for (const auto& item : r.response.items)
        if (!m.empty() && memberSignature(item.key) == m) for_key.push_back(item);
      items.add(for_key);
      cache_.put(k, std::move(for_key));
      continue;
    }
    if (k.rfind(kCalleesKeyPrefix, 0) == 0) {
      // Every function production ran from a caller (calls through function pointers).
      std::string caller = normalizeFunctionKey(k.substr(kCalleesKeyPrefix.size()));
      for (const auto& item : r.response.items)
        if (calledFrom(item, caller)) for_key.push_back(item);
      items.add(for_key);
      cache_.put(k, std::move(for_key));
      continue;
    }
    std::string name = qualifiedName(k);
    bool exact = false;
    for (const auto& item : r.response.items) {
      if (item.key == k || (!item.mangled.empty() && item.mangled == k)) {
        for_key.insert(for_key.begin(), item);
        exact = true;
      }
    }
    if (!exact) {
      for (const auto& item : r.response.items) {
        if (qualifiedName(item.key) == name) for_key.push_back(item);
      }
    }
    if (for_key.empty()) {
      // No variant of the deployed release probes it (issue 23): an item without stats that
      // says so, so the editor shows "not probed" where it would show "no data".
      for (const auto& u : r.response.unprobed) {
        if (u.key != k) continue;
        FeedbackItem item;
        item.key = k;
        item.exposure = u.exposure;
        for_key.push_back(std::move(item));
        break;
      }
    }
    items.add(for_key);
    cache_.put(k, std::move(for_key));
  }
  return out;
}

ChangesResult FeedbackProvider::poll(int wait_ms) {
  std::string cursor;
  {
    MutexLock lock(mu_);
    cursor = cursor_;
  }
  ChangesResult r = wait_ms > 0 ? source_->waitChanges(cursor, wait_ms) : source_->changes(cursor);
  if (r.status != FetchStatus::Ok) return r;
  MutexLock lock(mu_);
  if (r.all) {
    cache_.expireAll();
    dynamic_.expireAll();
  } else if (!r.keys.empty()) {
    // Entries are keyed by the requested spelling (canonical, mangled or name): drop every
    // entry that is, or holds, a changed key, and entries of the same qualified name (a key
    // recorded without parameters answers lookups by the full signature, and an entry cached
    // as "no data" holds no item to compare with).
    std::unordered_set<std::string> changed(r.keys.begin(), r.keys.end());
    std::unordered_set<std::string> changed_names;
    for (const auto& k : r.keys) changed_names.insert(qualifiedName(k));
    cache_.eraseIf([&](const std::string& k, const std::vector<FeedbackItem>& items) {
      bool drop = changed.count(k) || changed_names.count(qualifiedName(k));
      for (const auto& item : items) {
        if (drop) break;
        drop = changed.count(item.key) || (!item.mangled.empty() && changed.count(item.mangled));
      }
      if (drop) r.invalidated.push_back(k);
      return drop;
    });
    // A function's dynamic metrics change with its own calls (its callers' and callees' rows
    // are its call sites): drop the changed keys' entries.
    dynamic_.eraseIf([&](const std::string& k, const std::optional<DynamicMetrics>&) {
      return changed.count(k) > 0;
    });
  }
  if (!r.cursor.empty()) cursor_ = r.cursor;
  return r;
}

void FeedbackProvider::expireAll() {
  MutexLock lock(mu_);
  cache_.expireAll();
  dynamic_.expireAll();
  dynamic_unsupported_at_.reset();
}

void FeedbackProvider::setCacheOptions(CacheOptions options) {
  MutexLock lock(mu_);
  cache_.setOptions(options);
  dynamic_.setOptions(options);
}

ProviderCounters FeedbackProvider::counters() const {
  MutexLock lock(mu_);
  return counters_;
}

size_t FeedbackProvider::cacheSize() const {
  MutexLock lock(mu_);
  return cache_.size();
}

}  // namespace perfhat::feedback
