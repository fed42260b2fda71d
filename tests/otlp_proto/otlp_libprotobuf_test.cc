// The hand-written OTLP protobuf decoder against libprotobuf: requests built and serialized with
// the generated OTLP classes (varied spans, every AnyValue kind, events, links, unknown-to-us
// fields, spans the decoder must reject) decode to what the message holds, field by field. The
// handler's partial-success answer parses back with libprotobuf too.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <variant>

#include "feedback-handler/http/http_answers.h"
#include "feedback-handler/otlp/otlp.h"
#include "opentelemetry/proto/collector/trace/v1/trace_service.pb.h"

namespace {

namespace pb_common = opentelemetry::proto::common::v1;
namespace pb_trace = opentelemetry::proto::trace::v1;
using opentelemetry::proto::collector::trace::v1::ExportTracePartialSuccess;
using opentelemetry::proto::collector::trace::v1::ExportTraceServiceRequest;
using opentelemetry::proto::collector::trace::v1::ExportTraceServiceResponse;
using perfhat::otlp::Attributes;
using perfhat::otlp::AttrValue;

class Gen {
 public:
  explicit Gen(uint32_t seed) : rng_(seed) {}
  uint64_t below(uint64_t n) { return std::uniform_int_distribution<uint64_t>(0, n - 1)(rng_); }
  bool chance(int percent) { return below(100) < static_cast<uint64_t>(percent); }
  std::string bytes(size_t n) {
    std::string s(n, '\0');
    for (char& c : s) c = static_cast<char>(below(256));
    return s;
  }
  std::string text() {
    static const char* const kWords[] = {
        "", "agile::Backlog::points(int)", "ü-ñ-中文", "GET /x", "a\"quote\\slash", "tab\tnl\n"};
    std::string s = kWords[below(std::size(kWords))];
    if (chance(30)) s += std::to_string(below(1000000));
    return s;
  }
  // Every AnyValue kind, extreme numbers included; sometimes no value at all.
  void value(pb_common::AnyValue& v) {
    switch (below(9)) {
      case 0:
        v.set_string_value(text());
        break;
      case 1:
        v.set_bool_value(chance(50));
        break;
      case 2: {
        static const int64_t kInts[] = {0, 1, -1, INT64_MIN, INT64_MAX, 1234567890123};
        v.set_int_value(chance(50) ? kInts[below(std::size(kInts))]
                                   : static_cast<int64_t>(below(UINT64_MAX)));
        break;
      }
      case 3: {
        static const double kDoubles[] = {0.0, -0.0, 1.5, -3e300, 5e-324, 1e15};
        v.set_double_value(kDoubles[below(std::size(kDoubles))]);
        break;
      }
      case 4:
        value(*v.mutable_array_value()->add_values());
        break;
      case 5: {
        auto* kv = v.mutable_kvlist_value()->add_values();
        kv->set_key("nested");
        kv->mutable_value()->set_int_value(7);
        break;
      }
      case 6:
        v.set_bytes_value(bytes(below(5)));
        break;
      default:
        break;  // an AnyValue with no field
    }
  }
  void attributes(google::protobuf::RepeatedPtrField<pb_common::KeyValue>& out) {
    for (uint64_t n = below(6); n > 0; --n) {
      pb_common::KeyValue* kv = out.Add();
      kv->set_key(chance(50) ? "perfhat.sampling.weight" : text());
      if (!chance(10)) value(*kv->mutable_value());  // sometimes no value at all
    }
  }
  void span(pb_trace::Span& s) {
    // Mostly well-formed; some ids of the wrong size, no start, or an end before the start.
    s.set_trace_id(bytes(chance(95) ? 16 : below(20)));
    s.set_span_id(bytes(chance(95) ? 8 : below(12)));
    switch (below(4)) {
      case 0:
        break;  // a root
      case 1:
        s.set_parent_span_id(std::string(8, '\0'));  // all zero: also a root
        break;
      default:
        s.set_parent_span_id(bytes(chance(95) ? 8 : 3));
    }
    s.set_name(text());
    s.set_kind(static_cast<pb_trace::Span::SpanKind>(below(6)));
    const uint64_t start = chance(97) ? 1'700'000'000'000'000'000ULL + below(1'000'000'000) : 0;
    s.set_start_time_unix_nano(start);
    s.set_end_time_unix_nano(chance(97) ? start + below(5'000'000'000) : start - 1);
    if (chance(50)) s.set_trace_state("vendor=1");
    if (chance(50)) s.set_flags(static_cast<uint32_t>(below(1024)));
    attributes(*s.mutable_attributes());
    s.set_dropped_attributes_count(static_cast<uint32_t>(below(3)));
    for (uint64_t n = below(3); n > 0; --n) {
      auto* e = s.add_events();
      e->set_time_unix_nano(start);
      e->set_name("event");
      attributes(*e->mutable_attributes());
    }
    for (uint64_t n = below(2); n > 0; --n) {
      auto* l = s.add_links();
      l->set_trace_id(bytes(16));
      l->set_span_id(bytes(8));
    }
    if (chance(70)) {
      s.mutable_status()->set_code(static_cast<pb_trace::Status::StatusCode>(below(3)));
      s.mutable_status()->set_message(text());
    }
  }
  ExportTraceServiceRequest request() {
    ExportTraceServiceRequest r;
    for (uint64_t n = below(4); n > 0; --n) {
      pb_trace::ResourceSpans* rs = r.add_resource_spans();
      if (chance(80)) attributes(*rs->mutable_resource()->mutable_attributes());
      if (chance(30)) rs->set_schema_url("https://opentelemetry.io/schemas/1.21.0");
      for (uint64_t m = below(3); m > 0; --m) {
        pb_trace::ScopeSpans* ss = rs->add_scope_spans();
        ss->mutable_scope()->set_name("perfhat");
        for (uint64_t k = below(5); k > 0; --k) span(*ss->add_spans());
      }
    }
    return r;
  }

 private:
  std::mt19937_64 rng_;
};

// What the decoder makes of an AnyValue: arrays, kvlists, bytes and no value are monostate.
AttrValue expectedValue(const pb_common::KeyValue& kv) {
  if (!kv.has_value()) return std::monostate{};
  const pb_common::AnyValue& v = kv.value();
  switch (v.value_case()) {
    case pb_common::AnyValue::kStringValue:
      return v.string_value();
    case pb_common::AnyValue::kBoolValue:
      return v.bool_value();
    case pb_common::AnyValue::kIntValue:
      return v.int_value();
    case pb_common::AnyValue::kDoubleValue:
      return v.double_value();
    default:
      return std::monostate{};
  }
}

void expectAttributes(const google::protobuf::RepeatedPtrField<pb_common::KeyValue>& want,
                      const Attributes& got, const std::string& where) {
  ASSERT_EQ(got.size(), static_cast<size_t>(want.size())) << where;
  for (int i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i].first, want[i].key()) << where << " attribute " << i;
    const AttrValue expected = expectedValue(want[i]);
    ASSERT_EQ(got[i].second.index(), expected.index()) << where << " attribute " << i;
    if (const double* d = std::get_if<double>(&expected)) {
      // Bit for bit (-0.0 and subnormals included).
      EXPECT_EQ(std::signbit(*d), std::signbit(std::get<double>(got[i].second)));
      EXPECT_EQ(*d, std::get<double>(got[i].second)) << where << " attribute " << i;
    } else {
      EXPECT_TRUE(got[i].second == expected) << where << " attribute " << i;
    }
  }
}

// The decoder's acceptance rules (otlp.h acceptSpan), applied to the message.
bool accepted(const pb_trace::Span& s) {
  const std::string& parent = s.parent_span_id();
  const bool root = parent.find_first_not_of('\0') == std::string::npos;
  return s.span_id().size() == 8 && s.trace_id().size() == 16 && (root || parent.size() == 8) &&
         s.end_time_unix_nano() >= s.start_time_unix_nano() && s.start_time_unix_nano() != 0;
}

perfhat::otlp::StatusCode expectedStatus(const pb_trace::Span& s) {
  switch (s.status().code()) {
    case pb_trace::Status::STATUS_CODE_OK:
      return perfhat::otlp::StatusCode::kOk;
    case pb_trace::Status::STATUS_CODE_ERROR:
      return perfhat::otlp::StatusCode::kError;
    default:
      return perfhat::otlp::StatusCode::kUnset;
  }
}

void expectDecodedAs(const ExportTraceServiceRequest& want, const perfhat::otlp::ExportRequest& got,
                     const std::string& where) {
  ASSERT_EQ(got.resources.size(), static_cast<size_t>(want.resource_spans_size())) << where;
  size_t next = 0;
  uint64_t rejected = 0;
  for (int r = 0; r < want.resource_spans_size(); ++r) {
    const pb_trace::ResourceSpans& rs = want.resource_spans(r);
    expectAttributes(rs.resource().attributes(), got.resources[r], where + " resource");
    for (const pb_trace::ScopeSpans& ss : rs.scope_spans()) {
      for (const pb_trace::Span& s : ss.spans()) {
        if (!accepted(s)) {
          ++rejected;
          continue;
        }
        ASSERT_LT(next, got.spans.size()) << where;
        const perfhat::otlp::Span& d = got.spans[next];
        const std::string at = where + " span " + std::to_string(next++);
        EXPECT_EQ(d.trace_id, s.trace_id()) << at;
        EXPECT_EQ(d.span_id, s.span_id()) << at;
        const bool root = s.parent_span_id().find_first_not_of('\0') == std::string::npos;
        EXPECT_EQ(d.parent_span_id, root ? std::string() : s.parent_span_id()) << at;
        EXPECT_EQ(d.name, s.name()) << at;
        EXPECT_EQ(d.kind, static_cast<int>(s.kind())) << at;
        EXPECT_EQ(d.start_unix_nano, s.start_time_unix_nano()) << at;
        EXPECT_EQ(d.end_unix_nano, s.end_time_unix_nano()) << at;
        EXPECT_EQ(d.status, expectedStatus(s)) << at;
        EXPECT_EQ(d.resource, static_cast<size_t>(r)) << at;
        expectAttributes(s.attributes(), d.attributes, at);
      }
    }
  }
  EXPECT_EQ(got.spans.size(), next) << where;
  EXPECT_EQ(got.rejected, rejected) << where;
  EXPECT_EQ(got.rejection_reason.empty(), rejected == 0) << where;
}

TEST(OtlpLibprotobuf, VariedRequestsDecodeFieldByField) {
  Gen gen(20261125);
  perfhat::otlp::ExportRequest recycled;  // as a server thread decodes: into reused storage
  for (int i = 0; i < 300; ++i) {
    const ExportTraceServiceRequest want = gen.request();
    std::string wire;
    ASSERT_TRUE(want.SerializeToString(&wire));
    const std::string where = "request " + std::to_string(i);
    expectDecodedAs(want, perfhat::otlp::decodeProtobuf(wire), where);
    perfhat::otlp::decodeProtobuf(wire, recycled);
    expectDecodedAs(want, recycled, where + " (recycled)");
  }
}

// Fields this decoder does not know (a newer OTLP) are skipped, whatever their wire type.
TEST(OtlpLibprotobuf, UnknownFieldsOfEveryWireTypeAreSkipped) {
  Gen gen(7);
  ExportTraceServiceRequest want;
  do {
    want = gen.request();
  } while (want.resource_spans_size() == 0);
  pb_trace::Span* span = want.mutable_resource_spans(0)->add_scope_spans()->add_spans();
  gen.span(*span);
  span->set_span_id(std::string(8, 'i'));
  span->set_trace_id(std::string(16, 't'));
  span->set_parent_span_id(std::string(8, 'p'));
  span->set_start_time_unix_nano(10);
  span->set_end_time_unix_nano(20);
  auto* unknown = span->GetReflection()->MutableUnknownFields(span);
  unknown->AddVarint(100, 300);
  unknown->AddFixed32(101, 7);
  unknown->AddFixed64(102, 9);
  unknown->AddLengthDelimited(103, "future");
  std::string wire;
  ASSERT_TRUE(want.SerializeToString(&wire));
  const perfhat::otlp::ExportRequest got = perfhat::otlp::decodeProtobuf(wire);
  expectDecodedAs(want, got, "with unknown fields");
  bool found = false;
  for (const auto& s : got.spans) found |= s.span_id == std::string(8, 'i');
  EXPECT_TRUE(found);
}

// The handler's answer to a partly rejected protobuf export, as libprotobuf reads it.
TEST(OtlpLibprotobuf, PartialSuccessAnswerParsesWithLibprotobuf) {
  for (uint64_t rejected : {uint64_t{1}, uint64_t{127}, uint64_t{128}, uint64_t{1} << 40}) {
    const std::string message(rejected == 128 ? 300 : 5, 'm');
    ExportTraceServiceResponse r;
    ASSERT_TRUE(r.ParseFromString(perfhat::handler::protoPartialSuccess(rejected, message)));
    EXPECT_EQ(r.partial_success().rejected_spans(), static_cast<int64_t>(rejected));
    EXPECT_EQ(r.partial_success().error_message(), message);
  }
}

}  // namespace
