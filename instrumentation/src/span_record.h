// One recorded span as a thread's ring holds it (probe.cc writes it, the batch exporter reads
// it): ids, ticks and the probe's values, without strings.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>

#include "perfhat/perfhat.hpp"

namespace perfhat::detail {

// A span's fields, without its attributes: what the ring writes for every recorded call.
struct SpanFields {
  uint32_t site = 0;
  bool error = false;
  uint8_t nattr = 0;
  uint32_t loop_line = 0;
  uint64_t start = 0, end = 0;
  uint64_t trace_hi = 0, trace_lo = 0, span_id = 0, parent = 0;
  double weight = 1;
  int64_t result_size = -1, loop_iterations = -1;
};

// A span as the exporter queues it: its fields and its first `nattr` attributes.
struct SpanRecord : SpanFields {
  Attr attrs[4];
};

// A thread's span ring: anonymous pages, committed as entries are first written and never
// constructed (probe.cc writes every field a reader reads). The fields of all entries come
// first and the attributes after them, written only for a span that has some: a call recorded
// without attributes (every auto-instrumented one) touches 88 bytes, not the 376 of a whole
// record, so a short process faults in a quarter of the pages and a quarter of the cache lines
// (bench/README.md, s45). Constructing a 4,096-entry ring of whole records cost each recording
// thread about half a millisecond (span_ring.cc).
class SpanRing {
 public:
  SpanRing() = default;
  explicit SpanRing(size_t entries);  // throws std::bad_alloc
  SpanRing(SpanRing&& o) noexcept { swap(o); }
  SpanRing& operator=(SpanRing&& o) noexcept {
    SpanRing gone(std::move(o));
    swap(gone);
    return *this;
  }
  SpanRing(const SpanRing&) = delete;
  SpanRing& operator=(const SpanRing&) = delete;
  ~SpanRing();

  SpanFields& fields(size_t i) { return fields_[i]; }
  Attr* attrs(size_t i) { return attrs_[i]; }
  // Entry i as the exporter queues it: its fields and its nattr attributes (the rest of `out`'s
  // attributes are left as they were).
  void read(size_t i, SpanRecord& out) const;

 private:
  void swap(SpanRing& o) noexcept;
  SpanFields* fields_ = nullptr;
  Attr (*attrs_)[4] = nullptr;
  size_t bytes_ = 0;
};

}  // namespace perfhat::detail
