// OTLP protobuf decoding: a hand-written proto3 wire-format reader for the trace messages of
// opentelemetry/proto/collector/trace/v1/trace_service.proto (no libprotobuf dependency).
// Unknown fields are skipped per proto3 rules; every read is bounds-checked, so truncated or
// garbage input is an OtlpError, never an out-of-bounds read.
#include <cstddef>
#include <cstring>

#include "feedback-handler/otlp/otlp.h"

namespace perfhat::otlp {
namespace {

enum WireType : uint32_t { kVarint = 0, kI64 = 1, kLen = 2, kI32 = 5 };

[[noreturn]] void fail(const char* what) { throw OtlpError(std::string("OTLP/protobuf: ") + what); }

class Reader {
 public:
  explicit Reader(std::string_view data) : p_(data.data()), end_(data.data() + data.size()) {}
  bool done() const { return p_ >= end_; }

  uint64_t varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 70; shift += 7) {
      if (p_ >= end_) fail("truncated varint");
      auto b = static_cast<uint8_t>(*p_++);
      if (shift == 63 && b > 1) fail("varint overflows 64 bits");
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
    fail("varint too long");
  }
  uint64_t fixed64() { return fixed<uint64_t>("truncated fixed64"); }
  uint32_t fixed32() { return fixed<uint32_t>("truncated fixed32"); }
  std::string_view bytes() {
    uint64_t n = varint();
    if (n > static_cast<uint64_t>(end_ - p_)) fail("length-delimited field runs past the end");
    std::string_view v(p_, n);
    p_ += n;
    return v;
  }
  // Returns false at the end; fills field number and wire type.
  bool next(uint32_t& field, uint32_t& wire) {
    if (done()) return false;
    uint64_t tag = varint();
    field = static_cast<uint32_t>(tag >> 3);
    wire = static_cast<uint32_t>(tag & 7);
    if (field == 0 || tag >> 3 > 0x1fffffff) fail("invalid field number");
    return true;
  }
  void skip(uint32_t wire) {
    switch (wire) {
      case kVarint:
        varint();
        break;
      case kI64:
        fixed64();
        break;
      case kLen:
        bytes();
        break;
      case kI32:
        fixed32();
        break;
      default:
        fail("unsupported wire type (groups are not used by OTLP)");
    }
  }
  void expect(uint32_t wire, uint32_t want) {
    if (wire != want) fail("field has the wrong wire type");
  }

 private:
  // proto3 fixed64/fixed32: sizeof(T) little-endian bytes, copied as they are (as before: the
  // decoder assumes a little-endian host).
  template <class T>
  T fixed(const char* truncated) {
    if (end_ - p_ < static_cast<std::ptrdiff_t>(sizeof(T))) fail(truncated);
    T v;
    std::memcpy(&v, p_, sizeof(T));
    p_ += sizeof(T);
    return v;
  }

  const char* p_;
  const char* end_;
};

// Calls on(bytes) for each occurrence of the embedded message `field` in the message `data`,
// in order; every other field is skipped.
template <class On>
void eachMessage(std::string_view data, uint32_t field, On&& on) {
  Reader r(data);
  uint32_t f, w;
  while (r.next(f, w)) {
    if (f == field) {
      r.expect(w, kLen);
      on(r.bytes());
    } else {
      r.skip(w);
    }
  }
}

// Length-delimited field into `into`, reusing its capacity.
void str(Reader& r, uint32_t wire, std::string& into) {
  r.expect(wire, kLen);
  into.assign(r.bytes());
}

// Decodes an AnyValue into `v`; a string lands in the string `v` may already hold (its capacity
// is reused when `v` is a recycled attribute).
void anyValue(std::string_view data, AttrValue& v) {
  Reader r(data);
  bool set = false;  // an AnyValue with no field is empty
  uint32_t f, w;
  while (r.next(f, w)) {
    set = true;
    switch (f) {
      case 1: {
        r.expect(w, kLen);
        std::string_view text = r.bytes();
        if (auto* held = std::get_if<std::string>(&v)) {
          held->assign(text);
        } else {
          v.emplace<std::string>(text);
        }
        break;
      }
      case 2:
        r.expect(w, kVarint);
        v = r.varint() != 0;
        break;
      case 3:
        r.expect(w, kVarint);
        v = static_cast<int64_t>(r.varint());
        break;
      case 4: {
        r.expect(w, kI64);
        uint64_t bits = r.fixed64();
        double d;
        std::memcpy(&d, &bits, 8);
        v = d;
        break;
      }
      default:
        r.skip(w);
        v = std::monostate{};  // array, kvlist, bytes
    }
  }
  if (!set) v = std::monostate{};
}

// Appends one KeyValue to attrs[0, used), recycling the element at `used` when there is one.
void keyValue(std::string_view data, Attributes& attrs, size_t& used) {
  if (used == attrs.size()) attrs.emplace_back();
  auto& [key, value] = attrs[used];
  key.clear();
  bool has_value = false;
  Reader r(data);
  uint32_t f, w;
  while (r.next(f, w)) {
    if (f == 1) {
      str(r, w, key);
    } else if (f == 2) {
      r.expect(w, kLen);
      anyValue(r.bytes(), value);
      has_value = true;
    } else {
      r.skip(w);
    }
  }
  if (!has_value) value = std::monostate{};
  ++used;
}

Attributes resource(std::string_view data) {
  Attributes attrs;
  size_t used = 0;
  eachMessage(data, 1, [&](std::string_view kv) { keyValue(kv, attrs, used); });
  return attrs;
}

StatusCode status(std::string_view data) {
  Reader r(data);
  StatusCode code = StatusCode::kUnset;
  uint32_t f, w;
  while (r.next(f, w)) {
    if (f == 3) {
      r.expect(w, kVarint);
      uint64_t c = r.varint();
      code = c == 2 ? StatusCode::kError : c == 1 ? StatusCode::kOk : StatusCode::kUnset;
    } else {
      r.skip(w);
    }
  }
  return code;
}

// Decoding state: spans [0, used) are this request's; the rest are recycled storage.
struct Decoder {
  ExportRequest& out;
  size_t used = 0;
};

void span(std::string_view data, size_t res, Decoder& d) {
  ExportRequest& out = d.out;
  if (d.used == out.spans.size()) out.spans.emplace_back();
  Span& s = out.spans[d.used];
  s.trace_id.clear();
  s.span_id.clear();
  s.parent_span_id.clear();
  s.name.clear();
  s.kind = 0;
  s.start_unix_nano = s.end_unix_nano = 0;
  s.status = StatusCode::kUnset;
  s.resource = res;
  size_t attrs = 0;
  Reader r(data);
  uint32_t f, w;
  while (r.next(f, w)) {
    switch (f) {
      case 1:
        str(r, w, s.trace_id);
        break;
      case 2:
        str(r, w, s.span_id);
        break;
      case 4:
        str(r, w, s.parent_span_id);
        if (s.parent_span_id.find_first_not_of('\0') == std::string::npos) s.parent_span_id.clear();
        break;
      case 5:
        str(r, w, s.name);
        break;
      case 6:
        r.expect(w, kVarint);
        s.kind = static_cast<int>(r.varint() & 0x7fffffff);
        break;
      case 7:
        r.expect(w, kI64);
        s.start_unix_nano = r.fixed64();
        break;
      case 8:
        r.expect(w, kI64);
        s.end_unix_nano = r.fixed64();
        break;
      case 9:
        r.expect(w, kLen);
        keyValue(r.bytes(), s.attributes, attrs);
        break;
      case 15:
        r.expect(w, kLen);
        s.status = status(r.bytes());
        break;
      default:
        r.skip(w);  // trace_state, events, links, dropped counts, flags
    }
  }
  s.attributes.erase(s.attributes.begin() + static_cast<std::ptrdiff_t>(attrs), s.attributes.end());
  if (acceptSpan(s, out)) ++d.used;  // a rejected span's slot is recycled by the next one
}

void scopeSpans(std::string_view data, size_t res, Decoder& d) {
  eachMessage(data, 2, [&](std::string_view sp) { span(sp, res, d); });
}

void resourceSpans(std::string_view data, Decoder& d) {
  ExportRequest& out = d.out;
  size_t res = out.resources.size();
  out.resources.emplace_back();
  Reader r(data);
  uint32_t f, w;
  while (r.next(f, w)) {
    if (f == 1) {
      r.expect(w, kLen);
      out.resources[res] = resource(r.bytes());
    } else if (f == 2) {
      r.expect(w, kLen);
      scopeSpans(r.bytes(), res, d);
    } else {
      r.skip(w);
    }
  }
}

}  // namespace

void decodeProtobuf(std::string_view body, ExportRequest& out) {
  out.resources.clear();
  out.rejected = 0;
  out.rejection_reason.clear();
  Decoder d{out};
  try {
    eachMessage(body, 1, [&](std::string_view rs) { resourceSpans(rs, d); });
  } catch (...) {
    out.spans.clear();  // no half-decoded request
    throw;
  }
  out.spans.erase(out.spans.begin() + static_cast<std::ptrdiff_t>(d.used), out.spans.end());
}

ExportRequest decodeProtobuf(std::string_view body) {
  ExportRequest out;
  decodeProtobuf(body, out);
  return out;
}

}  // namespace perfhat::otlp
