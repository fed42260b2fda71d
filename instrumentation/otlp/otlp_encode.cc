#include "otlp_encode.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string_view>
#include <vector>

#include "json_text.h"

namespace perfhat::otlp {
namespace {

constexpr const char* kScopeName = "perfhat";
constexpr const char* kScopeVersion = "0.1.0";

// ---- protobuf wire format -------------------------------------------------------------------
// Appends to one growing buffer. Key/value attributes are written in place (their lengths are
// computed, not encoded separately and copied): the span path allocates only when the buffer
// grows, which is what makes export cheap per span (issues #4/#5).
size_t varint_size(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}
// Size of a length-delimited field with a one-byte tag (every field number here is < 16).
size_t len_field_size(size_t n) { return 1 + varint_size(n) + n; }

class Pb {
 public:
  void varint(uint64_t v) { commit(put_varint(room(10), v)); }
  void tag(int field, int wire) { varint((static_cast<uint64_t>(field) << 3) | wire); }
  void u64(int field, uint64_t v) {  // varint field (int64/uint32/enum/bool)
    char* p = room(11);
    *p++ = static_cast<char>(field << 3);  // one-byte tags: every field number here is < 16
    commit(put_varint(p, v));
  }
  void fixed64(int field, uint64_t v) {
    char* p = room(9);
    *p++ = static_cast<char>((field << 3) | 1);
    for (int i = 0; i < 8; ++i) p[i] = static_cast<char>((v >> (8 * i)) & 0xFF);
    commit(p + 8);
  }
  void dbl(int field, double d) {
    uint64_t v;
    std::memcpy(&v, &d, 8);
    fixed64(field, v);
  }
  void bytes(int field, const void* data, size_t n) {
    char* p = room(11 + n);
    // room() returns at least 11 + n writable bytes; clang-analyzer loses track of the grown
    // buffer across the unique_ptr move and reports a null / zero-size write here.
    // NOLINTNEXTLINE(clang-analyzer-core.NullDereference,clang-analyzer-cplusplus.NewDelete)
    *p++ = static_cast<char>((field << 3) | 2);
    p = put_varint(p, n);
    if (n) std::memcpy(p, data, n);
    commit(p + n);
  }
  void str(int field, std::string_view s) { bytes(field, s.data(), s.size()); }
  // Bytes that are already encoded fields.
  void raw(std::string_view s) {
    char* p = room(s.size());
    if (!s.empty()) std::memcpy(p, s.data(), s.size());
    commit(p + s.size());
  }
  void msg(int field, const Pb& m) { bytes(field, m.buf_.get(), m.len_); }

  // KeyValue{key, AnyValue{string_value | bool_value | int_value | double_value}} as field
  // `field` of the enclosing message.
  void kv_string(int field, std::string_view k, std::string_view v) {
    kv_header(field, k, len_field_size(v.size()));
    str(1, v);
  }
  void kv_int(int field, std::string_view k, int64_t v) {
    kv_header(field, k, 1 + varint_size(static_cast<uint64_t>(v)));
    u64(3, static_cast<uint64_t>(v));
  }
  void kv_double(int field, std::string_view k, double v) {
    kv_header(field, k, 1 + 8);
    dbl(4, v);
  }
  void kv_bool(int field, std::string_view k, bool v) {
    kv_header(field, k, 2);
    u64(2, v ? 1 : 0);
  }

  void clear() { len_ = 0; }
  size_t size() const { return len_; }
  std::string_view view() const { return {buf_.get(), len_}; }
  // Leaves n uninitialized bytes at the end (filled later through data()).
  void skip(size_t n) { commit(room(n) + n); }
  char* data() { return buf_.get(); }

 private:
  // Makes room for n more bytes and returns where they go; commit() then marks the end of what
  // was written.
  // The buffer is uninitialized memory, not a std::string: growing it never zero-fills.
  char* room(size_t n) {
    if (len_ + n > cap_) {
      size_t cap = std::max(2 * cap_, len_ + n + 256);
      std::unique_ptr<char[]> bigger(new char[cap]);
      if (len_) std::memcpy(bigger.get(), buf_.get(), len_);
      buf_ = std::move(bigger);
      cap_ = cap;
    }
    return buf_.get() + len_;
  }
  void commit(const char* end) { len_ = static_cast<size_t>(end - buf_.get()); }
  static char* put_varint(char* p, uint64_t v) {
    while (v >= 0x80) {
      *p++ = static_cast<char>((v & 0x7F) | 0x80);
      v >>= 7;
    }
    *p++ = static_cast<char>(v);
    return p;
  }
  // Tag and length of the KeyValue, its key, and the tag and length of its AnyValue.
  void kv_header(int field, std::string_view k, size_t any_size) {
    tag(field, 2);
    varint(len_field_size(k.size()) + len_field_size(any_size));
    str(1, k);
    tag(2, 2);
    varint(any_size);
  }

  std::unique_ptr<char[]> buf_;  // bytes [0, len_) are the message, [len_, cap_) capacity
  size_t len_ = 0, cap_ = 0;
};

// The release and variant a process runs (docs/plan.md), when it runs one: resource attributes of
// every export, spans, metrics and aggregates alike.
std::vector<std::pair<const char*, const std::string*>> variant_attributes(const Resource& r) {
  std::vector<std::pair<const char*, const std::string*>> out;
  if (!r.release.empty()) out.emplace_back("perfhat.release", &r.release);
  if (!r.variant.empty()) out.emplace_back("perfhat.variant", &r.variant);
  if (!r.replica.empty()) out.emplace_back("perfhat.replica", &r.replica);
  return out;
}

Pb resource_pb(const Resource& r) {
  Pb res;
  res.kv_string(1, "service.name", r.service_name);
  if (!r.service_version.empty()) res.kv_string(1, "service.version", r.service_version);
  if (!r.host_name.empty()) res.kv_string(1, "host.name", r.host_name);
  for (const auto& [k, v] : variant_attributes(r)) res.kv_string(1, k, *v);
  res.kv_string(1, "telemetry.sdk.name", "perfhat");
  res.kv_string(1, "telemetry.sdk.language", "cpp");
  return res;
}

Pb scope_pb() {
  Pb s;
  s.str(1, kScopeName);
  s.str(2, kScopeVersion);
  return s;
}

void span_id_bytes(uint64_t id, uint8_t out[8]) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<uint8_t>(id >> (56 - 8 * i));
}

// ---- JSON -----------------------------------------------------------------------------------
std::string jkv_string(const std::string& k, const std::string& v) {
  return "{\"key\":" + json_quoted(k) + ",\"value\":{\"stringValue\":" + json_quoted(v) + "}}";
}
std::string jkv_int(const std::string& k, int64_t v) {
  return "{\"key\":" + json_quoted(k) + ",\"value\":{\"intValue\":\"" + std::to_string(v) + "\"}}";
}
std::string jnum(double d) {
  if (!std::isfinite(d)) return "0";
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%.17g", d);
  return buf;
}
std::string jkv_double(const std::string& k, double v) {
  return "{\"key\":" + json_quoted(k) + ",\"value\":{\"doubleValue\":" + jnum(v) + "}}";
}
std::string jkv_bool(const std::string& k, bool v) {
  return "{\"key\":" + json_quoted(k) + ",\"value\":{\"boolValue\":" + (v ? "true" : "false") +
         "}}";
}

std::string resource_json(const Resource& r) {
  std::string out = "{\"attributes\":[" + jkv_string("service.name", r.service_name);
  if (!r.service_version.empty()) out += "," + jkv_string("service.version", r.service_version);
  if (!r.host_name.empty()) out += "," + jkv_string("host.name", r.host_name);
  for (const auto& [k, v] : variant_attributes(r)) out += "," + jkv_string(k, *v);
  out += "," + jkv_string("telemetry.sdk.name", "perfhat") + "," +
         jkv_string("telemetry.sdk.language", "cpp") + "]}";
  return out;
}

std::string scope_json() {
  return std::string("{\"name\":\"") + kScopeName + "\",\"version\":\"" + kScopeVersion + "\"}";
}

// Attribute list shared by both encodings.
struct Attrs {
  std::vector<std::pair<std::string, std::string>> strings;
  std::vector<std::pair<std::string, int64_t>> ints;
  std::vector<std::pair<std::string, double>> doubles;
  std::vector<std::pair<std::string, bool>> bools;
};

Attrs code_attrs(const std::string& function, const std::string& mangled, const std::string& file,
                 uint32_t line) {
  Attrs a;
  a.strings.emplace_back("code.function.name", function);
  if (!mangled.empty()) a.strings.emplace_back("code.function.mangled", mangled);
  if (!file.empty()) a.strings.emplace_back("code.file.path", file);
  if (line) a.ints.emplace_back("code.line.number", line);
  return a;
}

Attrs span_attrs(const SpanData& s) {
  Attrs a = code_attrs(s.function, s.mangled, s.file, s.line);
  a.doubles.emplace_back("perfhat.sampling.weight", s.weight);
  if (s.result_size >= 0) a.ints.emplace_back("perfhat.result.size", s.result_size);
  if (s.loop_iterations >= 0) {
    a.ints.emplace_back("perfhat.loop.iterations", s.loop_iterations);
    a.ints.emplace_back("perfhat.loop.line", s.loop_line);
  }
  a.ints.emplace_back("thread.id", static_cast<int64_t>(s.thread_id));
  for (const auto& x : s.attributes) {
    switch (x.kind) {
      case AttributeValue::kInt:
        a.ints.emplace_back(x.key, x.i);
        break;
      case AttributeValue::kDouble:
        a.doubles.emplace_back(x.key, x.d);
        break;
      case AttributeValue::kString:
        a.strings.emplace_back(x.key, x.s);
        break;
    }
  }
  return a;
}

void attrs_pb(Pb& m, int field, const Attrs& a) {
  for (const auto& [k, v] : a.strings) m.kv_string(field, k, v);
  for (const auto& [k, v] : a.ints) m.kv_int(field, k, v);
  for (const auto& [k, v] : a.doubles) m.kv_double(field, k, v);
  for (const auto& [k, v] : a.bools) m.kv_bool(field, k, v);
}

// The part of a Span that depends only on its probe site: Span.name (field 5) and the code.*
// attributes (field 9).
void site_fields_pb(Pb& m, const SpanData& s) {
  m.str(5, s.name);
  m.kv_string(9, "code.function.name", s.function);
  if (!s.mangled.empty()) m.kv_string(9, "code.function.mangled", s.mangled);
  if (!s.file.empty()) m.kv_string(9, "code.file.path", s.file);
  if (s.line) m.kv_int(9, "code.line.number", s.line);
}

// site_fields_pb() per site, encoded once per thread (issue #5). Reading a span's four strings
// (scattered over the heap, ~300 bytes) cost more than the rest of its encoding; the cached
// block is one copy from memory that stays in cache (a service has tens of hot sites). An entry
// is re-encoded if the span's string sizes or line differ from the cached one's (a misused
// site id), so a stale block needs the same sizes as well.
class SiteFieldsCache {
 public:
  std::string_view get(const SpanData& s) {
    if (s.site == 0 || s.site >= kMaxCached) {
      scratch_.clear();
      site_fields_pb(scratch_, s);
      return scratch_.view();
    }
    if (entries_.size() <= s.site) entries_.resize(s.site + 1);
    auto& e = entries_[s.site];
    if (!e || e->name_n != s.name.size() || e->function_n != s.function.size() ||
        e->mangled_n != s.mangled.size() || e->file_n != s.file.size() || e->line != s.line) {
      if (!e) e = std::make_unique<Entry>();
      scratch_.clear();
      site_fields_pb(scratch_, s);
      e->bytes.assign(scratch_.view());
      e->name_n = s.name.size();
      e->function_n = s.function.size();
      e->mangled_n = s.mangled.size();
      e->file_n = s.file.size();
      e->line = s.line;
    }
    return e->bytes;
  }

 private:
  static constexpr uint32_t kMaxCached = 1u << 20;
  struct Entry {
    std::string bytes;
    size_t name_n = 0, function_n = 0, mangled_n = 0, file_n = 0;
    uint32_t line = 0;
  };
  std::vector<std::unique_ptr<Entry>> entries_;  // by site id
  Pb scratch_;
};

// The rest of span_attrs() written straight into `m` (no Attrs, no key/value copies): the code.*
// attributes come first from site_fields_pb(), then these, each with the user's attributes of
// that kind last.
void span_attrs_pb(Pb& m, int field, const SpanData& s) {
  for (const auto& x : s.attributes) {
    if (x.kind == AttributeValue::kString) m.kv_string(field, x.key, x.s);
  }
  if (s.result_size >= 0) m.kv_int(field, "perfhat.result.size", s.result_size);
  if (s.loop_iterations >= 0) {
    m.kv_int(field, "perfhat.loop.iterations", s.loop_iterations);
    m.kv_int(field, "perfhat.loop.line", s.loop_line);
  }
  m.kv_int(field, "thread.id", static_cast<int64_t>(s.thread_id));
  for (const auto& x : s.attributes) {
    if (x.kind == AttributeValue::kInt) m.kv_int(field, x.key, x.i);
  }
  m.kv_double(field, "perfhat.sampling.weight", s.weight);
  for (const auto& x : s.attributes) {
    if (x.kind == AttributeValue::kDouble) m.kv_double(field, x.key, x.d);
  }
}

std::string attrs_json(const Attrs& a) {
  std::string out = "[";
  bool first = true;
  auto add = [&](const std::string& x) {
    if (!first) out += ",";
    first = false;
    out += x;
  };
  for (const auto& [k, v] : a.strings) add(jkv_string(k, v));
  for (const auto& [k, v] : a.ints) add(jkv_int(k, v));
  for (const auto& [k, v] : a.doubles) add(jkv_double(k, v));
  for (const auto& [k, v] : a.bools) add(jkv_bool(k, v));
  return out + "]";
}

Attrs aggregate_attrs(const AggregateData& g) {
  Attrs a = code_attrs(g.function, g.mangled, g.file, g.line);
  if (g.name != g.function) a.strings.emplace_back("perfhat.scope.name", g.name);
  a.bools.emplace_back("perfhat.relevant", g.relevant);
  return a;
}

}  // namespace

std::string_view traces_protobuf_view(const ExportBatch& b) {
  // One per-thread buffer holds the whole request and keeps its capacity, so a steady exporter
  // allocates nothing and copies the body only once per span (scratch Span -> buffer). The
  // envelope (ExportTraceServiceRequest{resource_spans: {resource, scope_spans: <body>}}) is
  // written into headroom reserved before the body once its length is known: no copy of the
  // ~200 KB body into a separate std::string (issue #5).
  thread_local Pb out, sp;
  thread_local SiteFieldsCache site_fields;
  Pb res = resource_pb(b.resource);
  // tag + varint length of ResourceSpans, resource field, tag + varint length of ScopeSpans.
  const size_t headroom = 1 + 10 + len_field_size(res.size()) + 1 + 10;
  out.clear();
  out.skip(headroom);
  out.msg(1, scope_pb());
  for (const auto& s : b.spans) {
    sp.clear();
    sp.bytes(1, s.trace_id.data(), 16);
    uint8_t id[8];
    span_id_bytes(s.span_id, id);
    sp.bytes(2, id, 8);
    if (s.parent_span_id) {
      span_id_bytes(s.parent_span_id, id);
      sp.bytes(4, id, 8);
    }
    sp.u64(6, s.is_request ? 2 : 1);  // SERVER for request roots, INTERNAL otherwise
    sp.fixed64(7, s.start_unix_ns);
    sp.fixed64(8, s.end_unix_ns);
    // Field order is free in protobuf; the site's fields are one block: name, code.* attributes.
    sp.raw(site_fields.get(s));
    span_attrs_pb(sp, 9, s);
    if (s.error) {
      sp.tag(15, 2);
      sp.varint(2);
      sp.u64(3, 2);  // Status{code: STATUS_CODE_ERROR}
    }
    out.msg(2, sp);
  }
  const size_t scope_spans_size = out.size() - headroom;
  size_t rs_size = len_field_size(res.size()) + len_field_size(scope_spans_size);
  Pb head;
  head.tag(1, 2);
  head.varint(rs_size);
  head.msg(1, res);
  head.tag(2, 2);
  head.varint(scope_spans_size);
  char* start = out.data() + headroom - head.size();  // head.size() <= headroom by construction
  std::memcpy(start, head.view().data(), head.size());
  return {start, head.size() + scope_spans_size};
}

std::string traces_protobuf(const ExportBatch& b) { return std::string(traces_protobuf_view(b)); }

std::string traces_json(const ExportBatch& b) {
  std::string out = "{\"resourceSpans\":[{\"resource\":" + resource_json(b.resource) +
                    ",\"scopeSpans\":[{\"scope\":" + scope_json() + ",\"spans\":[";
  bool first = true;
  for (const auto& s : b.spans) {
    if (!first) out += ",";
    first = false;
    uint8_t id[8];
    span_id_bytes(s.span_id, id);
    out += "{\"traceId\":\"" + hex(s.trace_id.data(), 16) + "\",\"spanId\":\"" + hex(id, 8) + "\"";
    if (s.parent_span_id) {
      span_id_bytes(s.parent_span_id, id);
      out += ",\"parentSpanId\":\"" + hex(id, 8) + "\"";
    }
    out += ",\"name\":" + json_quoted(s.name) + ",\"kind\":" + (s.is_request ? "2" : "1") +
           ",\"startTimeUnixNano\":\"" + std::to_string(s.start_unix_ns) +
           "\",\"endTimeUnixNano\":\"" + std::to_string(s.end_unix_ns) +
           "\",\"attributes\":" + attrs_json(span_attrs(s));
    if (s.error) out += ",\"status\":{\"code\":2}";
    out += "}";
  }
  out += "]}]}]}";
  return out;
}

std::string metrics_protobuf(const ExportBatch& b) {
  // Three delta Sum metrics; one data point per function.
  Pb calls, errors, duration;
  for (const auto& g : b.aggregates) {
    Attrs a = aggregate_attrs(g);
    auto point = [&](Pb& sum, bool is_int, double v) {
      Pb dp;
      attrs_pb(dp, 7, a);
      dp.fixed64(2, g.start_unix_ns);
      dp.fixed64(3, g.end_unix_ns);
      if (is_int) {
        dp.fixed64(6, static_cast<uint64_t>(static_cast<int64_t>(v)));  // sfixed64 as_int
      } else {
        dp.dbl(4, v);
      }
      sum.msg(1, dp);
    };
    point(calls, true, static_cast<double>(g.count));
    point(errors, true, static_cast<double>(g.errors));
    point(duration, false, g.sum_ns);
  }
  auto metric = [](const char* name, const char* unit, Pb& sum) {
    sum.u64(2, 1);  // AGGREGATION_TEMPORALITY_DELTA
    sum.u64(3, 1);  // monotonic
    Pb m;
    m.str(1, name);
    m.str(3, unit);
    m.msg(7, sum);
    return m;
  };
  Pb sm;
  sm.msg(1, scope_pb());
  sm.msg(2, metric("perfhat.function.calls", "{call}", calls));
  sm.msg(2, metric("perfhat.function.errors", "{error}", errors));
  sm.msg(2, metric("perfhat.function.duration", "ns", duration));
  Pb rm, req;
  rm.msg(1, resource_pb(b.resource));
  rm.msg(2, sm);
  req.msg(1, rm);
  return std::string(req.view());
}

std::string metrics_json(const ExportBatch& b) {
  auto points = [&](int which) {
    std::string out = "[";
    bool first = true;
    for (const auto& g : b.aggregates) {
      if (!first) out += ",";
      first = false;
      out += "{\"attributes\":" + attrs_json(aggregate_attrs(g)) + ",\"startTimeUnixNano\":\"" +
             std::to_string(g.start_unix_ns) + "\",\"timeUnixNano\":\"" +
             std::to_string(g.end_unix_ns) + "\",";
      if (which == 0) out += "\"asInt\":\"" + std::to_string(g.count) + "\"}";
      if (which == 1) out += "\"asInt\":\"" + std::to_string(g.errors) + "\"}";
      if (which == 2) out += "\"asDouble\":" + jnum(g.sum_ns) + "}";
    }
    return out + "]";
  };
  auto metric = [&](const char* name, const char* unit, int which) {
    return std::string("{\"name\":\"") + name + "\",\"unit\":\"" + unit +
           "\",\"sum\":{\"dataPoints\":" + points(which) +
           ",\"aggregationTemporality\":1,\"isMonotonic\":true}}";
  };
  return "{\"resourceMetrics\":[{\"resource\":" + resource_json(b.resource) +
         ",\"scopeMetrics\":[{\"scope\":" + scope_json() + ",\"metrics\":[" +
         metric("perfhat.function.calls", "{call}", 0) + "," +
         metric("perfhat.function.errors", "{error}", 1) + "," +
         metric("perfhat.function.duration", "ns", 2) + "]}]}]}";
}

std::string aggregates_json(const ExportBatch& b) {
  std::string out = "{\"resource\":{\"service.name\":" + json_quoted(b.resource.service_name);
  if (!b.resource.service_version.empty()) {
    out += ",\"service.version\":" + json_quoted(b.resource.service_version);
  }
  if (!b.resource.host_name.empty()) out += ",\"host.name\":" + json_quoted(b.resource.host_name);
  for (const auto& [k, v] : variant_attributes(b.resource)) {
    out += ",\"" + std::string(k) + "\":" + json_quoted(*v);
  }
  out += "},\"time_unix_nano\":\"" + std::to_string(b.histograms_end_unix_ns) + "\",\"sites\":[";
  for (size_t i = 0; i < b.sites.size(); ++i) {
    const SiteIdentity& s = b.sites[i];
    if (i) out += ',';
    out += "{\"name\":" + json_quoted(s.name) + ",\"function\":" + json_quoted(s.function);
    if (!s.mangled.empty()) out += ",\"mangled\":" + json_quoted(s.mangled);
    if (!s.file.empty()) out += ",\"file\":" + json_quoted(s.file);
    if (s.line) out += ",\"line\":" + std::to_string(s.line);
    out += '}';
  }
  out += ']';
  if (b.dropped.any()) {
    out += ",\"dropped\":{\"calls\":" + jnum(b.dropped.calls) + ",\"spans\":\"" +
           std::to_string(b.dropped.spans) + "\",\"rows\":\"" + std::to_string(b.dropped.rows) +
           "\"}";
  }
  out += ",\"rows\":[";
  static constexpr const char* kKinds[] = {"function", "callsite", "loop", "size", "self"};
  for (size_t i = 0; i < b.histograms.size(); ++i) {
    const HistogramData& h = b.histograms[i];
    if (i) out += ',';
    out += std::string("{\"kind\":\"") + kKinds[h.kind] + "\",\"site\":" + std::to_string(h.site);
    if (h.kind == HistogramData::kCallSite) out += ",\"caller\":" + std::to_string(h.caller);
    if (h.kind == HistogramData::kLoop) out += ",\"line\":" + std::to_string(h.line);
    out += ",\"minute\":" + std::to_string(h.minute) + ",\"zero\":" + jnum(h.zero) +
           ",\"sum\":" + jnum(h.sum);
    if (h.kind == HistogramData::kFunction) out += ",\"errors\":" + jnum(h.errors);
    if (h.kind == HistogramData::kFunction && h.sampled_calls > 0) {
      out += ",\"sampled_calls\":" + jnum(h.sampled_calls) +
             ",\"sampled_records\":" + jnum(h.sampled_records);
    }
    if (h.kind == HistogramData::kCallSite) out += ",\"parents\":" + jnum(h.parents);
    out += ",\"bins\":[";
    for (size_t k = 0; k < h.bins.size(); ++k) {
      if (k) out += ',';
      out += '[' + std::to_string(h.bins[k].first) + ',' + jnum(h.bins[k].second) + ']';
    }
    out += "]}";
  }
  return out + "]}";
}

}  // namespace perfhat::otlp
