#include "feedback-handler/otlp/otlp_encode.h"

#include <cstring>
#include <nlohmann/json.hpp>

#include "common/varint.h"

namespace perfhat::otlp {
namespace {

void varint(std::string& out, uint64_t v) { appendVarint(out, v); }
void tag(std::string& out, uint32_t field, uint32_t wire) { varint(out, (field << 3) | wire); }
void lenField(std::string& out, uint32_t field, std::string_view bytes) {
  tag(out, field, 2);
  varint(out, bytes.size());
  out.append(bytes);
}
void fixed64(std::string& out, uint32_t field, uint64_t v) {
  tag(out, field, 1);
  char b[8];
  std::memcpy(b, &v, 8);
  out.append(b, 8);
}

std::string anyValue(const AttrValue& v) {
  std::string out;
  if (auto* s = std::get_if<std::string>(&v)) {
    lenField(out, 1, *s);
  } else if (auto* b = std::get_if<bool>(&v)) {
    tag(out, 2, 0);
    varint(out, *b ? 1 : 0);
  } else if (auto* i = std::get_if<int64_t>(&v)) {
    tag(out, 3, 0);
    varint(out, static_cast<uint64_t>(*i));
  } else if (auto* d = std::get_if<double>(&v)) {
    uint64_t bits;
    std::memcpy(&bits, d, 8);
    fixed64(out, 4, bits);
  }
  return out;
}

std::string keyValues(uint32_t field, const Attributes& attrs) {
  std::string out;
  for (const auto& [k, v] : attrs) {
    std::string kv;
    lenField(kv, 1, k);
    lenField(kv, 2, anyValue(v));
    lenField(out, field, kv);
  }
  return out;
}

std::string hex(const std::string& raw) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : raw) {
    out.push_back(digits[c >> 4]);
    out.push_back(digits[c & 15]);
  }
  return out;
}

nlohmann::json jsonAttrs(const Attributes& attrs) {
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& [k, v] : attrs) {
    nlohmann::json val = nlohmann::json::object();
    if (auto* s = std::get_if<std::string>(&v)) val["stringValue"] = *s;
    if (auto* b = std::get_if<bool>(&v)) val["boolValue"] = *b;
    if (auto* i = std::get_if<int64_t>(&v)) val["intValue"] = std::to_string(*i);
    if (auto* d = std::get_if<double>(&v)) val["doubleValue"] = *d;
    arr.push_back({{"key", k}, {"value", val}});
  }
  return arr;
}

}  // namespace

std::string encodeProtobuf(const ExportRequest& request) {
  std::string out;
  for (size_t r = 0; r < request.resources.size(); ++r) {
    std::string rs;
    lenField(rs, 1, keyValues(1, request.resources[r]));
    std::string ss;
    for (const Span& s : request.spans) {
      if (s.resource != r) continue;
      std::string sp;
      lenField(sp, 1, s.trace_id);
      lenField(sp, 2, s.span_id);
      if (!s.parent_span_id.empty()) lenField(sp, 4, s.parent_span_id);
      lenField(sp, 5, s.name);
      tag(sp, 6, 0);
      varint(sp, static_cast<uint64_t>(s.kind));
      fixed64(sp, 7, s.start_unix_nano);
      fixed64(sp, 8, s.end_unix_nano);
      sp += keyValues(9, s.attributes);
      if (s.status != StatusCode::kUnset) {
        std::string st;
        tag(st, 3, 0);
        varint(st, static_cast<uint64_t>(s.status));
        lenField(sp, 15, st);
      }
      lenField(ss, 2, sp);
    }
    lenField(rs, 2, ss);
    lenField(out, 1, rs);
  }
  return out;
}

std::string encodeJson(const ExportRequest& request) {
  nlohmann::json rss = nlohmann::json::array();
  for (size_t r = 0; r < request.resources.size(); ++r) {
    nlohmann::json spans = nlohmann::json::array();
    for (const Span& s : request.spans) {
      if (s.resource != r) continue;
      nlohmann::json js = {{"traceId", hex(s.trace_id)},
                           {"spanId", hex(s.span_id)},
                           {"name", s.name},
                           {"kind", s.kind},
                           {"startTimeUnixNano", std::to_string(s.start_unix_nano)},
                           {"endTimeUnixNano", std::to_string(s.end_unix_nano)},
                           {"attributes", jsonAttrs(s.attributes)},
                           {"status", {{"code", static_cast<int>(s.status)}}}};
      if (!s.parent_span_id.empty()) js["parentSpanId"] = hex(s.parent_span_id);
      spans.push_back(std::move(js));
    }
    rss.push_back({{"resource", {{"attributes", jsonAttrs(request.resources[r])}}},
                   {"scopeSpans", {{{"scope", {{"name", "perfhat-test"}}}, {"spans", spans}}}}});
  }
  return nlohmann::json{{"resourceSpans", rss}}.dump();
}

}  // namespace perfhat::otlp
