// Fuzz target: the inter-handler bulk export (GET /v1/export response), which a local handler
// parses from its upstreams. Any input must parse or throw ExportFormatError (also when nested
// 200,000 deep); whatever parses must have finite, bounded totals and serialize and parse back to
// the same rows.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "feedback-handler/sync/export_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace perfhat::handler;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    ExportPage p = parseExport(text);
    for (const auto& [key, v] : p.rows.aggregates) {
      const auto& s = v.sketch;
      if (!(s.count() <= perfhat::DDSketch::kMaxCount) ||
          !(s.sum() <= perfhat::DDSketch::kMaxSum) ||
          !(v.x1 >= 0 && v.x1 <= perfhat::DDSketch::kMaxCount) ||
          !(v.x2 >= 0 && v.x2 <= perfhat::DDSketch::kMaxSum) ||
          !(v.x3 >= 0 && v.x3 <= perfhat::DDSketch::kMaxCount)) {
        __builtin_trap();
      }
    }
    ExportPage again = parseExport(serializeExport(p));
    if (again.rows.aggregates.size() != p.rows.aggregates.size() || again.cursor != p.cursor) {
      __builtin_trap();
    }
  } catch (const ExportFormatError&) {
  }
  return 0;
}
