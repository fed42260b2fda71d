// Fuzz target: the inter-handler bulk export (GET /v1/export response), which a local handler
// parses from its upstreams. Any input must parse or throw ExportFormatError; whatever parses
// must serialize and parse back to the same rows.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "feedback-handler/sync/export_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace perfhat::handler;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    ExportPage p = parseExport(text);
    ExportPage again = parseExport(serializeExport(p));
    if (again.rows.aggregates.size() != p.rows.aggregates.size() || again.cursor != p.cursor) {
      __builtin_trap();
    }
  } catch (const ExportFormatError&) {
  }
  return 0;
}
