#include "server/analysis/feedback_view.h"

#include "common/function_key.h"

namespace perfhat::analysis {

InMemoryFeedback::InMemoryFeedback(std::vector<FeedbackItem> items, bool stale)
    : items_(std::move(items)), stale_(stale) {
  for (size_t i = 0; i < items_.size(); ++i) index(i);
}

void InMemoryFeedback::add(FeedbackItem item) {
  items_.push_back(std::move(item));
  index(items_.size() - 1);
}

// Items are indexed under their key as given, its canonical form (datasets may carry a
// __PRETTY_FUNCTION__ or demangled spelling) and the mangled name; the first item wins a key.
void InMemoryFeedback::index(size_t i) {
  const FeedbackItem& item = items_[i];
  std::string canonical = normalizeFunctionKey(item.key);
  by_key_.emplace(item.key, i);
  if (canonical != item.key) by_key_.emplace(canonical, i);
  if (!item.mangled.empty()) by_key_.emplace(item.mangled, i);
  by_name_.emplace(qualifiedName(canonical), i);
}

const FeedbackItem* InMemoryFeedback::find(std::string_view key_or_mangled) const {
  auto it = by_key_.find(std::string(key_or_mangled));
  return it == by_key_.end() ? nullptr : &items_[it->second];
}

std::vector<const FeedbackItem*> InMemoryFeedback::findByName(
    std::string_view qualified_name) const {
  std::vector<const FeedbackItem*> out;
  auto [b, e] = by_name_.equal_range(std::string(qualified_name));
  for (auto it = b; it != e; ++it) out.push_back(&items_[it->second]);
  return out;
}

std::vector<const FeedbackItem*> InMemoryFeedback::all() const {
  std::vector<const FeedbackItem*> out;
  out.reserve(items_.size());
  for (const auto& item : items_) out.push_back(&item);
  return out;
}

}  // namespace perfhat::analysis
