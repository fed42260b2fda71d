#include "feedback-handler/ingest/span_index.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <string_view>

namespace perfhat::handler {

SpanRef SpanRef::of(const std::string& trace_id, const std::string& span_id) {
  SpanRef r;
  std::memcpy(r.bytes.data(), trace_id.data(), std::min<size_t>(trace_id.size(), 16));
  std::memcpy(r.bytes.data() + 16, span_id.data(), std::min<size_t>(span_id.size(), 8));
  return r;
}

size_t SpanRefHash::operator()(const SpanRef& r) const noexcept {
  // Ids are random bytes: folding three words is a good hash.
  uint64_t a, b, c;
  std::memcpy(&a, r.bytes.data(), 8);
  std::memcpy(&b, r.bytes.data() + 8, 8);
  std::memcpy(&c, r.bytes.data() + 16, 8);
  return static_cast<size_t>((a ^ (b * 0x9e3779b97f4a7c15ULL)) ^ (c * 0xc2b2ae3d27d4eb4fULL));
}

namespace {

// Pops the oldest entry of `order` and erases the entry of `map` it names, when that is still
// live (the same generation: a replaced or adopted entry leaves a stale order entry behind).
// Returns what went, as `weight` counts it, or 0.
template <class Order, class Map, class Weight>
size_t popOldest(std::deque<Order>& order, Map& map, Weight weight) {
  const Order o = order.front();
  order.pop_front();
  auto it = map.find(o.ref);
  if (it == map.end() || it->second.gen != o.gen) return 0;
  const size_t n = weight(it->second);
  map.erase(it);
  return n;
}
// Drops every entry of `order` that names no live entry of `map`.
template <class Order, class Map>
void dropStale(std::deque<Order>& order, const Map& map) {
  std::erase_if(order, [&map](const Order& o) {
    auto it = map.find(o.ref);
    return it == map.end() || it->second.gen != o.gen;
  });
}
constexpr auto kOneSpan = [](const auto&) { return size_t{1}; };
constexpr auto kItsChildren = [](const auto& waiting) { return waiting.children.size(); };

}  // namespace

uint64_t SpanIndex::keyHash(std::string_view key) { return std::hash<std::string_view>()(key); }

SpanIndex::SpanIndex(SpanIndexOptions options) : options_(std::move(options)) {
  if (!options_.now_ns) {
    options_.now_ns = [] {
      return std::chrono::duration_cast<std::chrono::nanoseconds>(
                 std::chrono::steady_clock::now().time_since_epoch())
          .count();
    };
  }
}

SpanIndex::Edge SpanIndex::link(Child child, Parent& parent) {
  Edge e;
  const uint64_t h = keyHash(child.key);
  e.count_parent =
      std::find(parent.credited.begin(), parent.credited.end(), h) == parent.credited.end();
  if (e.count_parent) parent.credited.push_back(h);
  e.child = std::move(child);
  e.caller = parent.key;
  e.parent_weight = parent.weight;
  e.parent_input_size = parent.input_size;
  ++c_.linked;
  return e;
}

// Both vectors are consumed: their elements are moved out through the structured bindings below,
// which clang-tidy's mutation analysis does not see.
// NOLINTBEGIN(performance-unnecessary-value-param)
std::vector<SpanIndex::Edge> SpanIndex::exchange(std::vector<std::pair<SpanRef, Parent>> parents,
                                                 std::vector<std::pair<SpanRef, Child>> orphans) {
  // NOLINTEND(performance-unnecessary-value-param)
  std::vector<Edge> edges;
  MutexLock lock(mu_);
  const int64_t now = options_.now_ns();
  expire(now);
  for (auto& [ref, child] : orphans) {
    if (auto it = spans_.find(ref); it != spans_.end()) {
      edges.push_back(link(std::move(child), it->second.parent));
      continue;
    }
    auto [it, inserted] = waiting_.try_emplace(ref);
    if (inserted) {
      it->second.gen = ++gen_;
      it->second.t = now;
      wait_order_.push_back({ref, it->second.gen, now});
    }
    it->second.children.push_back(std::move(child));
    ++waiting_children_;
  }
  for (auto& [ref, parent] : parents) {
    if (auto w = waiting_.find(ref); w != waiting_.end()) {
      for (Child& ch : w->second.children) {
        Edge& e = edges.emplace_back(link(std::move(ch), parent));
        e.adopted = true;
        e.parent = ref;
      }
      waiting_children_ -= w->second.children.size();
      waiting_.erase(w);
    }
    SpanEntry& e = spans_[ref];  // a re-sent span replaces its entry
    e.parent = std::move(parent);
    e.gen = ++gen_;
    e.t = now;
    span_order_.push_back({ref, e.gen, now});
  }
  evictSpans();
  evictWaiting();
  return edges;
}

void SpanIndex::expire(int64_t now) {
  const int64_t cutoff =
      now - std::chrono::duration_cast<std::chrono::nanoseconds>(options_.ttl).count();
  while (!span_order_.empty() && span_order_.front().t < cutoff)
    c_.spans_expired += popOldest(span_order_, spans_, kOneSpan);
  while (!wait_order_.empty() && wait_order_.front().t < cutoff) {
    const size_t children = popOldest(wait_order_, waiting_, kItsChildren);
    c_.waiting_expired += children;
    waiting_children_ -= children;
  }
}

void SpanIndex::evictSpans() {
  while (spans_.size() > options_.max_spans && !span_order_.empty())
    c_.spans_evicted += popOldest(span_order_, spans_, kOneSpan);
  // Order entries of replaced or adopted spans are dropped lazily; keep the deque bounded too.
  if (span_order_.size() > 2 * options_.max_spans + 1024) dropStale(span_order_, spans_);
}

void SpanIndex::evictWaiting() {
  while (waiting_children_ > options_.max_waiting && !wait_order_.empty()) {
    const size_t children = popOldest(wait_order_, waiting_, kItsChildren);
    c_.waiting_evicted += children;
    waiting_children_ -= children;
  }
  if (wait_order_.size() > 2 * options_.max_waiting + 1024) dropStale(wait_order_, waiting_);
}

SpanIndex::Counters SpanIndex::counters() const {
  MutexLock lock(mu_);
  Counters c = c_;
  c.spans = spans_.size();
  c.waiting = waiting_children_;
  return c;
}

}  // namespace perfhat::handler
