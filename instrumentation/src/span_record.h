// One recorded span as a thread's ring holds it (probe.cc writes it, the batch exporter reads
// it): ids, ticks and the probe's values, without strings.
#pragma once

#include <cstdint>

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

}  // namespace perfhat::detail
