// Call-site edges across export requests (DESIGN §4 call sites).
//
// SDKs export spans as they end, so a child often travels in an earlier request than its parent
// (and a long trace is split over several requests). This index remembers, for a while, every
// recent span's function key (so a later child can find its parent) and every child whose parent
// has not arrived yet (so the parent's request can emit the edge). Memory is bounded by entry
// counts and a TTL; what falls out is counted and reported on /metrics, and such an edge is
// simply not recorded (as before), never guessed.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/thread_annotations.h"

namespace perfhat::handler {

struct SpanIndexOptions {
  size_t max_spans = 200000;      // recent spans remembered (≈ 100 B each + key)
  size_t max_waiting = 50000;     // children waiting for their parent
  std::chrono::seconds ttl{120};  // how long either is kept
  // Monotonic clock in ns; injectable for tests.
  std::function<int64_t()> now_ns;
};

// trace id (16 bytes) + span id (8 bytes).
struct SpanRef {
  std::array<char, 24> bytes{};
  static SpanRef of(const std::string& trace_id, const std::string& span_id);
  bool operator==(const SpanRef& o) const { return bytes == o.bytes; }
};
struct SpanRefHash {
  size_t operator()(const SpanRef& r) const noexcept;
};

class SpanIndex {
 public:
  struct Parent {
    std::string key;
    double weight = 1;
    std::optional<double> input_size;
    // Hashes of callee keys whose edge already counted this parent (calls_per_parent counts each
    // parent once per edge, whichever request its children came in).
    std::vector<uint64_t> credited;
  };
  struct Child {
    std::string key;
    std::string service, version, env;
    int64_t bucket = 0;
    double duration_ns = 0;
    double weight = 1;
  };
  // A call-site edge found across requests; `count_parent` when this parent was not yet counted
  // for this callee.
  struct Edge {
    Child child;
    std::string caller;
    double parent_weight = 1;
    std::optional<double> parent_input_size;
    bool count_parent = false;
    // The parent came in this exchange's `parents` and adopted a child of an earlier request
    // (the parent's request then knows all its children so far: self time).
    bool adopted = false;
    SpanRef parent;
  };
  struct Counters {
    uint64_t spans = 0, waiting = 0;  // current sizes
    uint64_t linked = 0;              // edges linked across requests
    uint64_t spans_evicted = 0;       // dropped for capacity before the TTL
    uint64_t spans_expired = 0;       // dropped at the TTL
    uint64_t waiting_evicted = 0;     // waiting children dropped for capacity
    uint64_t waiting_expired = 0;     // waiting children whose parent never came
  };

  explicit SpanIndex(SpanIndexOptions options = {});

  // One request's exchange, under one lock: `orphans` (children whose parent was not in their
  // request) are linked to remembered parents or start waiting; `parents` (every identified span
  // of the request) are remembered and adopt the children waiting for them. Returns the edges
  // this request should record.
  std::vector<Edge> exchange(std::vector<std::pair<SpanRef, Parent>> parents,
                             std::vector<std::pair<SpanRef, Child>> orphans);

  Counters counters() const;
  static uint64_t keyHash(std::string_view key);

 private:
  struct SpanEntry {
    Parent parent;
    uint64_t gen = 0;
    int64_t t = 0;
  };
  struct WaitEntry {
    std::vector<Child> children;
    uint64_t gen = 0;
    int64_t t = 0;
  };
  struct Order {
    SpanRef ref;
    uint64_t gen;
    int64_t t;
  };
  void expire(int64_t now) REQUIRES(mu_);
  void evictSpans() REQUIRES(mu_);
  void evictWaiting() REQUIRES(mu_);
  Edge link(Child child, Parent& parent) REQUIRES(mu_);

  SpanIndexOptions options_;
  mutable Mutex mu_;
  std::unordered_map<SpanRef, SpanEntry, SpanRefHash> spans_ GUARDED_BY(mu_);
  std::unordered_map<SpanRef, WaitEntry, SpanRefHash> waiting_ GUARDED_BY(mu_);
  // Insertion order, for TTL and capacity.
  std::deque<Order> span_order_ GUARDED_BY(mu_), wait_order_ GUARDED_BY(mu_);
  size_t waiting_children_ GUARDED_BY(mu_) = 0;
  uint64_t gen_ GUARDED_BY(mu_) = 0;
  Counters c_ GUARDED_BY(mu_);
};

}  // namespace perfhat::handler
