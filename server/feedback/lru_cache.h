// LRU cache of feedback by function key, bounded by entry count and with a TTL (PerformanceHat
// used 10,000 entries and 10 minutes; DESIGN §6). Expired entries are not dropped eagerly: when
// the handler is unreachable the server still serves them, marked stale.
//
// Not thread-safe by itself; FeedbackProvider serialises access.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <list>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

#include "server/feedback/clock.h"

namespace perfhat::feedback {

struct CacheOptions {
  size_t max_entries = 10'000;
  std::chrono::seconds ttl{600};
};

template <typename V>
class LruCache {
 public:
  struct Lookup {
    const V* value = nullptr;  // nullptr: not cached at all
    bool expired = false;
  };

  LruCache(CacheOptions options, const Clock& clock) : options_(options), clock_(&clock) {}

  // Looks up `key`, marking it most recently used.
  Lookup get(const std::string& key) {
    auto it = index_.find(key);
    if (it == index_.end()) return {};
    order_.splice(order_.begin(), order_, it->second);
    const Entry& e = *it->second;
    return {&e.value, clock_->now() - e.stored >= options_.ttl};
  }

  void put(const std::string& key, V value) {
    auto it = index_.find(key);
    if (it != index_.end()) {
      it->second->value = std::move(value);
      it->second->stored = clock_->now();
      order_.splice(order_.begin(), order_, it->second);
      return;
    }
    if (options_.max_entries == 0) return;
    while (index_.size() >= options_.max_entries) {
      index_.erase(order_.back().key);
      order_.pop_back();
      ++evictions_;
    }
    order_.push_front(Entry{key, std::move(value), clock_->now()});
    index_.emplace(key, order_.begin());
  }

  bool erase(const std::string& key) {
    auto it = index_.find(key);
    if (it == index_.end()) return false;
    order_.erase(it->second);
    index_.erase(it);
    return true;
  }

  // Removes every entry for which pred(key, value) is true; returns how many.
  template <typename Pred>
  size_t eraseIf(Pred pred) {
    size_t n = 0;
    for (auto it = order_.begin(); it != order_.end();) {
      if (pred(it->key, it->value)) {
        index_.erase(it->key);
        it = order_.erase(it);
        ++n;
      } else {
        ++it;
      }
    }
    return n;
  }

  // Marks every entry expired (next lookup refetches, but the values stay as a fallback).
  void expireAll() {
    const auto past = clock_->now() - options_.ttl;
    for (auto& e : order_) e.stored = std::min(e.stored, past);
  }
  void clear() {
    order_.clear();
    index_.clear();
  }
  size_t size() const { return index_.size(); }
  size_t evictions() const { return evictions_; }
  const CacheOptions& options() const { return options_; }
  void setOptions(CacheOptions o) {
    options_ = o;
    while (index_.size() > options_.max_entries) {
      index_.erase(order_.back().key);
      order_.pop_back();
      ++evictions_;
    }
  }

 private:
  struct Entry {
    std::string key;
    V value;
    Clock::time_point stored;
  };
  CacheOptions options_;
  const Clock* clock_;
  std::list<Entry> order_;  // most recent first
  std::unordered_map<std::string, typename std::list<Entry>::iterator> index_;
  size_t evictions_ = 0;
};

}  // namespace perfhat::feedback
