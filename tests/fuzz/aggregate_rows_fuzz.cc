// Fuzz target: libperfhat aggregate bodies (POST /v1/aggregates, docs/aggregate-export.md).
// Any input must either decode or throw AggregateRowsError, leaving the batch untouched when it
// throws; whatever decodes must be sketches the store can serialize and read back.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "feedback-handler/ingest/aggregate_rows.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view body(reinterpret_cast<const char*>(data), size);
  perfhat::handler::Batch batch;
  try {
    perfhat::handler::decodeAggregateRows(body, batch);
  } catch (const perfhat::handler::AggregateRowsError&) {
    if (!batch.empty()) __builtin_trap();  // all or nothing
    return 0;
  }
  for (const auto& [key, value] : batch.aggregates) {
    if (key.key.empty() || value.sketch.empty()) __builtin_trap();
    if (!(perfhat::DDSketch::deserialize(value.sketch.serialize()) == value.sketch)) {
      __builtin_trap();
    }
  }
  return 0;
}
