// OTLP/JSON decoding: the proto3 JSON mapping with OTLP's deviations (hex trace/span ids).
// Lenient where the spec allows variation (int64 as string or number, enums as int or name,
// lowerCamelCase or original snake_case field names); strict on types otherwise, so a document
// with wrong types is a clear 400 instead of silently missing data.
#include <cmath>
#include <nlohmann/json.hpp>

#include "common/from_chars_whole.h"
#include "common/json_parse.h"
#include "feedback-handler/otlp/otlp.h"

namespace perfhat::otlp {
namespace {

using nlohmann::json;

const json* field(const json& obj, const char* camel, const char* snake = nullptr) {
  auto it = obj.find(camel);
  if (it != obj.end() && !it->is_null()) return &*it;
  if (snake) {
    it = obj.find(snake);
    if (it != obj.end() && !it->is_null()) return &*it;
  }
  return nullptr;
}

[[noreturn]] void fail(const std::string& what) { throw OtlpError("OTLP/JSON: " + what); }

const json& requireArray(const json* j, const char* what) {
  if (!j->is_array()) fail(std::string(what) + " must be an array");
  return *j;
}

std::string getString(const json& j, const char* what) {
  if (!j.is_string()) fail(std::string(what) + " must be a string");
  return j.get<std::string>();
}

// int64/uint64 per proto3 JSON: a decimal string or a JSON number.
template <typename T>
T getInt(const json& j, const char* what) {
  if (j.is_number_integer()) {
    if constexpr (std::is_unsigned_v<T>) {
      if (j.is_number_unsigned()) return j.get<T>();
      if (j.get<int64_t>() < 0) fail(std::string(what) + " must not be negative");
    }
    return j.get<T>();
  }
  if (j.is_number_float()) {
    double d = j.get<double>();
    if (std::floor(d) != d || std::abs(d) > 9.2e18) fail(std::string(what) + " must be an integer");
    if (std::is_unsigned_v<T> && d < 0) fail(std::string(what) + " must not be negative");
    return static_cast<T>(d);
  }
  if (j.is_string()) {
    T v{};
    if (!fromCharsWhole(j.get_ref<const std::string&>(), v)) {
      fail(std::string(what) + " is not a valid integer string");
    }
    return v;
  }
  fail(std::string(what) + " must be an integer (number or decimal string)");
}

double getDouble(const json& j, const char* what) {
  if (j.is_number()) return j.get<double>();
  if (j.is_string()) {
    const auto& s = j.get_ref<const std::string&>();
    if (s == "NaN") return std::nan("");
    if (s == "Infinity") return INFINITY;
    if (s == "-Infinity") return -INFINITY;
    double v{};
    if (!fromCharsWhole(s, v)) fail(std::string(what) + " is not a number");
    return v;
  }
  fail(std::string(what) + " must be a number");
}

int hexNibble(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Hex id → raw bytes. A malformed id returns "?" (wrong length), so the span is rejected as a
// partial failure rather than failing the whole batch.
std::string hexId(const json& j, const char* what) {
  std::string s = getString(j, what);
  if (s.size() % 2 != 0) return "?";
  std::string out(s.size() / 2, '\0');
  for (size_t i = 0; i < out.size(); ++i) {
    int hi = hexNibble(s[2 * i]), lo = hexNibble(s[2 * i + 1]);
    if (hi < 0 || lo < 0) return "?";
    out[i] = static_cast<char>(hi * 16 + lo);
  }
  return out;
}

int enumValue(const json& j, const char* what, std::initializer_list<const char*> names) {
  if (j.is_number_integer()) return j.get<int>();
  if (j.is_string()) {
    const auto& s = j.get_ref<const std::string&>();
    int i = 0;
    for (const char* n : names) {
      if (s == n) return i;
      ++i;
    }
    fail(std::string(what) + ": unknown enum name '" + s + "'");
  }
  fail(std::string(what) + " must be an enum (integer or name)");
}

AttrValue anyValue(const json& v) {
  if (!v.is_object()) fail("attribute value must be an object (AnyValue)");
  if (auto* s = field(v, "stringValue", "string_value")) return getString(*s, "stringValue");
  if (auto* b = field(v, "boolValue", "bool_value")) {
    if (!b->is_boolean()) fail("boolValue must be a boolean");
    return b->get<bool>();
  }
  if (auto* i = field(v, "intValue", "int_value")) return getInt<int64_t>(*i, "intValue");
  if (auto* d = field(v, "doubleValue", "double_value")) return getDouble(*d, "doubleValue");
  return std::monostate{};  // arrayValue, kvlistValue, bytesValue, or empty
}

Attributes attributes(const json* list) {
  Attributes out;
  if (!list) return out;
  for (const auto& kv : requireArray(list, "attributes")) {
    if (!kv.is_object()) fail("attribute must be an object");
    const json* k = field(kv, "key");
    if (!k) fail("attribute without key");
    const json* v = field(kv, "value");
    out.emplace_back(getString(*k, "attribute key"), v ? anyValue(*v) : AttrValue{});
  }
  return out;
}

void decodeSpan(const json& js, size_t resource, ExportRequest& out) {
  if (!js.is_object()) fail("span must be an object");
  Span s;
  s.resource = resource;
  if (auto* v = field(js, "traceId", "trace_id")) s.trace_id = hexId(*v, "traceId");
  if (auto* v = field(js, "spanId", "span_id")) s.span_id = hexId(*v, "spanId");
  if (auto* v = field(js, "parentSpanId", "parent_span_id")) {
    s.parent_span_id = hexId(*v, "parentSpanId");
    if (s.parent_span_id.find_first_not_of('\0') == std::string::npos) s.parent_span_id.clear();
  }
  if (auto* v = field(js, "name")) s.name = getString(*v, "name");
  if (auto* v = field(js, "kind")) {
    s.kind = enumValue(*v, "kind",
                       {"SPAN_KIND_UNSPECIFIED", "SPAN_KIND_INTERNAL", "SPAN_KIND_SERVER",
                        "SPAN_KIND_CLIENT", "SPAN_KIND_PRODUCER", "SPAN_KIND_CONSUMER"});
  }
  if (auto* v = field(js, "startTimeUnixNano", "start_time_unix_nano")) {
    s.start_unix_nano = getInt<uint64_t>(*v, "startTimeUnixNano");
  }
  if (auto* v = field(js, "endTimeUnixNano", "end_time_unix_nano")) {
    s.end_unix_nano = getInt<uint64_t>(*v, "endTimeUnixNano");
  }
  s.attributes = attributes(field(js, "attributes"));
  if (auto* st = field(js, "status")) {
    if (!st->is_object()) fail("status must be an object");
    if (auto* c = field(*st, "code")) {
      int code = enumValue(*c, "status.code",
                           {"STATUS_CODE_UNSET", "STATUS_CODE_OK", "STATUS_CODE_ERROR"});
      s.status = code == 2 ? StatusCode::kError : code == 1 ? StatusCode::kOk : StatusCode::kUnset;
    }
  }
  if (acceptSpan(s, out)) out.spans.push_back(std::move(s));
}

}  // namespace

ExportRequest decodeJson(std::string_view body) {
  // Nesting-limited (common/json_parse.h): a value nested 200,000 deep overflows the stack
  // wherever it is later copied or destroyed.
  JsonParse parsed = parseJson(body);
  if (!parsed.ok()) fail("body is " + parsed.error);
  const json& doc = parsed.value;
  if (!doc.is_object()) fail("top level must be an object");
  ExportRequest out;
  try {
    const json* rs_list = field(doc, "resourceSpans", "resource_spans");
    if (!rs_list) return out;  // an empty export is valid
    for (const auto& rs : requireArray(rs_list, "resourceSpans")) {
      if (!rs.is_object()) fail("resourceSpans entry must be an object");
      size_t resource = out.resources.size();
      const json* res = field(rs, "resource");
      if (res && !res->is_object()) fail("resource must be an object");
      out.resources.push_back(res ? attributes(field(*res, "attributes")) : Attributes{});
      const json* ss_list = field(rs, "scopeSpans", "scope_spans");
      if (!ss_list) continue;
      for (const auto& ss : requireArray(ss_list, "scopeSpans")) {
        if (!ss.is_object()) fail("scopeSpans entry must be an object");
        const json* spans = field(ss, "spans");
        if (!spans) continue;
        for (const auto& sp : requireArray(spans, "spans")) decodeSpan(sp, resource, out);
      }
    }
  } catch (const json::exception& e) {
    fail(e.what());
  }
  return out;
}

}  // namespace perfhat::otlp
