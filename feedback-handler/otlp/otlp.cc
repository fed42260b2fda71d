#include "feedback-handler/otlp/otlp.h"

#include <cstdio>

#include "common/from_chars_whole.h"

namespace perfhat::otlp {

const AttrValue* findAttr(const Attributes& attrs, std::string_view key) {
  for (const auto& [k, v] : attrs) {
    if (k == key) return &v;
  }
  return nullptr;
}

bool attrNumber(const Attributes& attrs, std::string_view key, double& out) {
  const AttrValue* v = findAttr(attrs, key);
  if (!v) return false;
  if (auto* i = std::get_if<int64_t>(v)) {
    out = static_cast<double>(*i);
    return true;
  }
  if (auto* d = std::get_if<double>(v)) {
    out = *d;
    return true;
  }
  if (auto* s = std::get_if<std::string>(v)) {
    // Some SDKs stringify numbers; accept a fully numeric string.
    return fromCharsWhole(*s, out);
  }
  return false;
}

std::string attrString(const Attributes& attrs, std::string_view key) {
  const AttrValue* v = findAttr(attrs, key);
  if (!v) return {};
  if (auto* s = std::get_if<std::string>(v)) return *s;
  if (auto* i = std::get_if<int64_t>(v)) return std::to_string(*i);
  if (auto* d = std::get_if<double>(v)) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", *d);
    return buf;
  }
  if (auto* b = std::get_if<bool>(v)) return *b ? "true" : "false";
  return {};
}

bool acceptSpan(const Span& span, ExportRequest& out) {
  const char* reason = nullptr;
  if (span.span_id.size() != 8) {
    reason = "span id must be 8 bytes";
  } else if (span.trace_id.size() != 16) {
    reason = "trace id must be 16 bytes";
  } else if (!span.parent_span_id.empty() && span.parent_span_id.size() != 8) {
    reason = "parent span id must be 8 bytes";
  } else if (span.end_unix_nano < span.start_unix_nano) {
    reason = "span ends before it starts";
  } else if (span.start_unix_nano == 0) {
    reason = "span has no start time";
  }
  if (!reason) return true;
  ++out.rejected;
  if (out.rejection_reason.empty()) out.rejection_reason = reason;
  return false;
}

}  // namespace perfhat::otlp
