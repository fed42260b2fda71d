// Decoded OTLP trace export requests (ExportTraceServiceRequest), flattened for ingestion.
//
// Both wire forms decode to the same structure: OTLP/JSON (otlp_json.cc, proto3 JSON mapping
// with hex ids) and protobuf (otlp_proto.cc, a hand-written wire-format reader: no libprotobuf).
// Events and links are skipped: nothing downstream uses them.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace perfhat::otlp {

// A malformed request as a whole (not valid JSON/protobuf, wrong types): HTTP 400.
class OtlpError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// AnyValue restricted to what feedback uses; arrays, kvlists and bytes decode to monostate.
using AttrValue = std::variant<std::monostate, std::string, int64_t, double, bool>;
using Attributes = std::vector<std::pair<std::string, AttrValue>>;

const AttrValue* findAttr(const Attributes& attrs, std::string_view key);
// Numeric view of an attribute (int, double, or a numeric string); false when absent/non-numeric.
bool attrNumber(const Attributes& attrs, std::string_view key, double& out);
// String view (strings as-is, numbers formatted); empty when absent.
std::string attrString(const Attributes& attrs, std::string_view key);

enum class StatusCode : int { kUnset = 0, kOk = 1, kError = 2 };

struct Span {
  std::string trace_id;        // raw bytes (16)
  std::string span_id;         // raw bytes (8)
  std::string parent_span_id;  // raw bytes (8) or empty for a root
  std::string name;
  int kind = 0;
  uint64_t start_unix_nano = 0;
  uint64_t end_unix_nano = 0;
  StatusCode status = StatusCode::kUnset;
  Attributes attributes;
  size_t resource = 0;  // index into ExportRequest::resources
};

struct ExportRequest {
  std::vector<Attributes> resources;
  std::vector<Span> spans;
  // Spans dropped while decoding (bad ids, end before start); reported as partial success.
  uint64_t rejected = 0;
  std::string rejection_reason;
};

// Throws OtlpError on a malformed document.
ExportRequest decodeJson(std::string_view body);
ExportRequest decodeProtobuf(std::string_view body);
// The same, into `out`, reusing the strings and vectors an earlier decode left there (a server
// thread decoding request after request then allocates almost nothing). `out` is overwritten;
// on OtlpError it holds no spans.
void decodeProtobuf(std::string_view body, ExportRequest& out);

// Checks the per-span invariants shared by both decoders; on failure appends to rejected.
bool acceptSpan(const Span& span, ExportRequest& out);

}  // namespace perfhat::otlp
