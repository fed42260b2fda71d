// Rows that mark a function's data as estimated from samples (AggKind::kSampled): the calls
// recorded with a weight other than 1 (by the request sampler or libperfhat's collection
// budget) and the records that carried them. Readers answer them as `sampled_calls` and
// `sampled_records` (common/feedback.h); the editor says "estimated from samples".
#pragma once

#include "feedback-handler/store/batch.h"

namespace perfhat::handler {

// Adds `weighted_calls` calls carried by `records` records to a kSampled row.
inline void noteSampled(AggValue& row, double weighted_calls, double records) {
  AggValue::addCount(row.x1, weighted_calls);
  AggValue::addSum(row.x2, records);
}

}  // namespace perfhat::handler
