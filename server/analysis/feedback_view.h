// What the analysis needs from the feedback layer: look up production data by key.
//
// The server fills a view per translation unit with one bulk request (all keys the TU mentions,
// through the LRU cache) before analysis runs, so the analysis itself never does I/O.
// Implementations: server/feedback/ (file dataset, HTTP handler client, cache) and tests.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/feedback.h"

namespace perfhat::analysis {

class FeedbackView {
 public:
  virtual ~FeedbackView() = default;
  // The item for a canonical key or a mangled name, or nullptr.
  virtual const FeedbackItem* find(std::string_view key_or_mangled) const = 0;
  // All items whose key's qualified name (the part before the parameter list) equals `name`;
  // used for name-level matching when the overload set has one member (DESIGN §3).
  virtual std::vector<const FeedbackItem*> findByName(std::string_view qualified_name) const = 0;
  // All items (for file:line matching and user rules).
  virtual std::vector<const FeedbackItem*> all() const = 0;
  // True when the data was served from cache because the handler was unreachable.
  virtual bool stale() const { return false; }
};

// A FeedbackView over an in-memory list of items (datasets, tests, the cache's per-TU result).
class InMemoryFeedback : public FeedbackView {
 public:
  InMemoryFeedback() = default;
  explicit InMemoryFeedback(std::vector<FeedbackItem> items, bool stale = false);
  void add(FeedbackItem item);

  const FeedbackItem* find(std::string_view key_or_mangled) const override;
  std::vector<const FeedbackItem*> findByName(std::string_view qualified_name) const override;
  std::vector<const FeedbackItem*> all() const override;
  bool stale() const override { return stale_; }

 private:
  void index(size_t i);
  std::vector<FeedbackItem> items_;
  std::unordered_map<std::string, size_t> by_key_;
  std::unordered_multimap<std::string, size_t> by_name_;
  bool stale_ = false;
};

}  // namespace perfhat::analysis
