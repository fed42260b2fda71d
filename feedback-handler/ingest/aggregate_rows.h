// POST /v1/aggregates (docs/aggregate-export.md): libperfhat's in-process histograms, decoded
// into the same aggregates (a Batch) that the equivalent spans give through aggregate(): a
// site's function key comes from the same span identification, rows become the same function,
// call-site, loop and result-size rows, with the same resource dimensions.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "feedback-handler/ingest/intake_limits.h"
#include "feedback-handler/store/batch.h"

namespace perfhat::handler {

// A malformed body (not JSON, a wrong type, an index or count out of range): HTTP 400.
class AggregateRowsError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

struct AggregateRowsStats {
  uint64_t rows = 0;         // rows merged
  uint64_t skipped = 0;      // rows whose site (or caller) has no identity: no name, no code.*
  double dropped_calls = 0;  // weighted calls the library reported lost (`dropped.calls`)
};

// Validates all of `body` before adding anything to `batch` (all or nothing); throws
// AggregateRowsError naming the offending member, also for a string, count or sum beyond the
// intake limits (intake_limits.h) and, with `bounds`, for a time or minute outside them.
AggregateRowsStats decodeAggregateRows(std::string_view body, Batch& batch,
                                       const TimeBounds* bounds = nullptr);

}  // namespace perfhat::handler
