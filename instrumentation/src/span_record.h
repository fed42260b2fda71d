// One recorded span as a thread's ring holds it (probe.cc writes it, the batch exporter reads
// it): ids, ticks and the probe's values, without strings.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "perfhat/perfhat.hpp"

namespace perfhat::detail {

struct SpanRecord {
  uint32_t site = 0;
  bool error = false;
  uint8_t nattr = 0;
  uint32_t loop_line = 0;
  uint64_t start = 0, end = 0;
  uint64_t trace_hi = 0, trace_lo = 0, span_id = 0, parent = 0;
  double weight = 1;
  int64_t result_size = -1, loop_iterations = -1;
  Attr attrs[4];
};

// A thread's span ring: anonymous pages, committed as entries are first written and never
// constructed (record_span writes every field a reader reads). A 4,096-entry ring is 1.3 MB:
// constructing it cost each recording thread about half a millisecond (span_ring.cc).
struct SpanRingFree {
  size_t bytes = 0;
  void operator()(SpanRecord* ring) const noexcept;
};
using SpanRing = std::unique_ptr<SpanRecord[], SpanRingFree>;
SpanRing make_span_ring(size_t entries);

}  // namespace perfhat::detail
