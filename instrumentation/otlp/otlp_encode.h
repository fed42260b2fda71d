// OTLP encodings of an ExportBatch: ExportTraceServiceRequest (spans) and
// ExportMetricsServiceRequest (phase-1 aggregates), as OTLP/JSON and as protobuf; and the
// histograms of the aggregate export mode. The protobuf
// wire format is written by hand (no libprotobuf), following opentelemetry-proto v1.
#pragma once

#include <string>
#include <string_view>

#include "json_text.h"
#include "perfhat/exporter.hpp"

namespace perfhat::otlp {

std::string traces_json(const ExportBatch& b);
std::string traces_protobuf(const ExportBatch& b);
// The same bytes in a per-thread buffer, valid until this thread's next call (no copy: the
// exporter POSTs straight from it).
std::string_view traces_protobuf_view(const ExportBatch& b);
std::string metrics_json(const ExportBatch& b);
std::string metrics_protobuf(const ExportBatch& b);
// Aggregate export mode: the histograms as the body of the handler's POST /v1/aggregates
// (perfhat's own JSON, not OTLP: docs/aggregate-export.md).
std::string aggregates_json(const ExportBatch& b);

// Helpers shared with tests (json_text.h's).
using perfhat::hex;

}  // namespace perfhat::otlp
