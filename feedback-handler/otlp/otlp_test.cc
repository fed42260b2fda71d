#include "feedback-handler/otlp/otlp.h"

#include <gtest/gtest.h>

#include "feedback-handler/otlp/otlp_encode.h"

namespace perfhat::otlp {
namespace {

// The example of reference/prior-art §3.2, with a child span and enum names.
constexpr const char* kJson = R"({"resourceSpans":[{"resource":{"attributes":[
  {"key":"service.name","value":{"stringValue":"orders"}},
  {"key":"service.version","value":{"stringValue":"1.4.2+g1a2b3c"}}]},
  "scopeSpans":[{"scope":{"name":"perfhat-instr","version":"0.1"},
  "spans":[{"traceId":"4BF92F3577B34DA6A3CE929D0E0E4736","spanId":"00f067aa0ba902b7","parentSpanId":"",
            "name":"OrderService::price","kind":1,
            "startTimeUnixNano":"1718000000000000000","endTimeUnixNano":"1718000001200000000",
            "attributes":[{"key":"code.function.name","value":{"stringValue":"shop::OrderService::price"}},
                          {"key":"code.line.number","value":{"intValue":"42"}},
                          {"key":"perfhat.sampling.weight","value":{"doubleValue":2.5}},
                          {"key":"flag","value":{"boolValue":true}},
                          {"key":"list","value":{"arrayValue":{"values":[]}}}],
            "status":{"code":0}},
           {"traceId":"4bf92f3577b34da6a3ce929d0e0e4736","spanId":"00f067aa0ba902b8",
            "parentSpanId":"00f067aa0ba902b7","name":"child","kind":"SPAN_KIND_CLIENT",
            "startTimeUnixNano":1718000000100000000,"endTimeUnixNano":"1718000000200000000",
            "status":{"code":"STATUS_CODE_ERROR","message":"boom"},
            "events":[{"name":"e"}]}]}]}]})";

TEST(OtlpJson, DecodesTheReferenceExample) {
  ExportRequest r = decodeJson(kJson);
  ASSERT_EQ(r.resources.size(), 1u);
  EXPECT_EQ(attrString(r.resources[0], "service.name"), "orders");
  ASSERT_EQ(r.spans.size(), 2u);
  EXPECT_EQ(r.rejected, 0u);
  const Span& s = r.spans[0];
  EXPECT_EQ(s.name, "OrderService::price");
  EXPECT_EQ(s.trace_id.size(), 16u);
  EXPECT_EQ(static_cast<unsigned char>(s.trace_id[0]), 0x4bu);
  EXPECT_TRUE(s.parent_span_id.empty());
  EXPECT_EQ(s.end_unix_nano - s.start_unix_nano, 1200000000u);
  double line = 0, weight = 0;
  EXPECT_TRUE(attrNumber(s.attributes, "code.line.number", line));
  EXPECT_EQ(line, 42);
  EXPECT_TRUE(attrNumber(s.attributes, "perfhat.sampling.weight", weight));
  EXPECT_EQ(weight, 2.5);
  EXPECT_EQ(attrString(s.attributes, "flag"), "true");
  const Span& c = r.spans[1];
  EXPECT_EQ(c.kind, 3);
  EXPECT_EQ(c.status, StatusCode::kError);
  EXPECT_EQ(c.parent_span_id, s.span_id);
}

TEST(OtlpJson, SnakeCaseFieldNamesAreAccepted) {
  ExportRequest r = decodeJson(R"({"resource_spans":[{"scope_spans":[{"spans":[
    {"trace_id":"0102030405060708090a0b0c0d0e0f10","span_id":"0102030405060708","name":"x",
     "start_time_unix_nano":"5","end_time_unix_nano":"9"}]}]}]})");
  ASSERT_EQ(r.spans.size(), 1u);
  EXPECT_EQ(r.spans[0].end_unix_nano, 9u);
}

TEST(OtlpJson, MalformedDocumentsThrow) {
  EXPECT_THROW(decodeJson("{"), OtlpError);
  EXPECT_THROW(decodeJson("[]"), OtlpError);
  EXPECT_THROW(decodeJson(R"({"resourceSpans":"nope"})"), OtlpError);
  EXPECT_THROW(decodeJson(R"({"resourceSpans":[{"scopeSpans":[{"spans":[{"name":5}]}]}]})"),
               OtlpError);
  EXPECT_THROW(
      decodeJson(R"({"resourceSpans":[{"scopeSpans":[{"spans":[{"startTimeUnixNano":"12x"}]}]}]})"),
      OtlpError);
  EXPECT_THROW(decodeJson(R"({"resourceSpans":[{"scopeSpans":[{"spans":[{"kind":"WAT"}]}]}]})"),
               OtlpError);
  EXPECT_NO_THROW(decodeJson("{}"));
}

TEST(OtlpJson, InvalidSpansAreRejectedIndividually) {
  ExportRequest r = decodeJson(R"({"resourceSpans":[{"scopeSpans":[{"spans":[
    {"traceId":"zz","spanId":"0102030405060708","startTimeUnixNano":"1","endTimeUnixNano":"2"},
    {"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"0102030405060708",
     "startTimeUnixNano":"9","endTimeUnixNano":"2"},
    {"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"0102030405060708",
     "startTimeUnixNano":"1","endTimeUnixNano":"2"}]}]}]})");
  EXPECT_EQ(r.spans.size(), 1u);
  EXPECT_EQ(r.rejected, 2u);
  EXPECT_FALSE(r.rejection_reason.empty());
}

ExportRequest sample() {
  ExportRequest r;
  r.resources.push_back({{"service.name", std::string("svc")}, {"host.name", std::string("h1")}});
  r.resources.push_back({{"service.name", std::string("other")}});
  for (int i = 0; i < 3; ++i) {
    Span s;
    s.trace_id = std::string(16, static_cast<char>(i + 1));
    s.span_id = std::string(8, static_cast<char>(i + 10));
    if (i > 0) s.parent_span_id = std::string(8, static_cast<char>(10));
    s.name = "span" + std::to_string(i);
    s.kind = 2;
    s.start_unix_nano = 1000 + i;
    s.end_unix_nano = 5000 + i * 100;
    s.status = i == 2 ? StatusCode::kError : StatusCode::kUnset;
    s.attributes = {{"code.function.name", std::string("ns::f")},
                    {"code.line.number", int64_t{-7}},
                    {"d", 1.25},
                    {"b", false}};
    s.resource = static_cast<size_t>(i == 2);
    r.spans.push_back(s);
  }
  return r;
}

void expectSame(const ExportRequest& a, const ExportRequest& b) {
  ASSERT_EQ(a.spans.size(), b.spans.size());
  ASSERT_EQ(a.resources, b.resources);
  for (size_t i = 0; i < a.spans.size(); ++i) {
    EXPECT_EQ(a.spans[i].trace_id, b.spans[i].trace_id);
    EXPECT_EQ(a.spans[i].span_id, b.spans[i].span_id);
    EXPECT_EQ(a.spans[i].parent_span_id, b.spans[i].parent_span_id);
    EXPECT_EQ(a.spans[i].name, b.spans[i].name);
    EXPECT_EQ(a.spans[i].start_unix_nano, b.spans[i].start_unix_nano);
    EXPECT_EQ(a.spans[i].end_unix_nano, b.spans[i].end_unix_nano);
    EXPECT_EQ(a.spans[i].status, b.spans[i].status);
    EXPECT_EQ(a.spans[i].attributes, b.spans[i].attributes);
    EXPECT_EQ(a.spans[i].resource, b.spans[i].resource);
  }
}

TEST(OtlpProto, RoundTripsThroughTheWireFormat) {
  ExportRequest in = sample();
  ExportRequest out = decodeProtobuf(encodeProtobuf(in));
  EXPECT_EQ(out.rejected, 0u);
  expectSame(in, out);
}

TEST(OtlpJson, RoundTripsThroughJson) {
  ExportRequest in = sample();
  expectSame(in, decodeJson(encodeJson(in)));
}

TEST(OtlpProto, UnknownFieldsAreSkipped) {
  ExportRequest in = sample();
  std::string bytes = encodeProtobuf(in);
  // Field 99 (varint) and field 100 (fixed32) at top level: must be ignored.
  std::string extra =
      bytes + std::string("\x98\x06\x2a", 3) + std::string("\xa5\x06\x01\x02\x03\x04", 6);
  expectSame(in, decodeProtobuf(extra));
}

TEST(OtlpProto, TruncatedAndGarbageInputThrows) {
  std::string bytes = encodeProtobuf(sample());
  for (size_t n = 1; n < bytes.size(); n += 7) {
    // Any strict prefix either throws or decodes fewer spans; it never reads out of bounds.
    try {
      ExportRequest r = decodeProtobuf(std::string_view(bytes).substr(0, n));
      EXPECT_LT(r.spans.size(), 3u);
    } catch (const OtlpError&) {
    }
  }
  EXPECT_THROW(decodeProtobuf(bytes.substr(0, bytes.size() - 1)), OtlpError);
  EXPECT_THROW(decodeProtobuf("\x0a\xff\xff\xff\xff\x0f"), OtlpError);  // length past end
  EXPECT_THROW(decodeProtobuf("\x0b"), OtlpError);                      // group wire type
  EXPECT_THROW(decodeProtobuf("\x09\x01"), OtlpError);                  // field 1 as fixed64
  EXPECT_NO_THROW(decodeProtobuf(""));
}

// The server decodes request after request into one recycled object: whatever the previous
// request left there (more or fewer spans and attributes, other value types, rejected spans, a
// failed decode), the result equals a fresh decode.
TEST(OtlpProto, DecodingIntoARecycledRequestEqualsAFreshDecode) {
  ExportRequest big = sample();
  for (int i = 0; i < 5; ++i) big.spans.push_back(big.spans[static_cast<size_t>(i % 3)]);
  big.spans[1].attributes.push_back({"extra", std::string(100, 'x')});
  ExportRequest small = sample();
  small.spans.resize(1);
  small.spans[0].attributes = {{"code.line.number", std::string("a string now")}, {"e", 3.5}};
  small.spans[0].parent_span_id.clear();
  ExportRequest rejecting = sample();
  rejecting.spans[0].span_id = "short";  // rejected: its slot is reused by the next span
  const std::vector<std::string> bodies = {encodeProtobuf(big), encodeProtobuf(small),
                                           encodeProtobuf(rejecting), encodeProtobuf(big),
                                           encodeProtobuf(sample())};
  ExportRequest recycled;
  for (size_t i = 0; i < bodies.size(); ++i) {
    SCOPED_TRACE(i);
    decodeProtobuf(bodies[i], recycled);
    ExportRequest fresh = decodeProtobuf(bodies[i]);
    expectSame(fresh, recycled);
    EXPECT_EQ(recycled.rejected, fresh.rejected);
    EXPECT_EQ(recycled.rejection_reason, fresh.rejection_reason);
  }
  EXPECT_THROW(decodeProtobuf(bodies[0].substr(0, bodies[0].size() - 1), recycled), OtlpError);
  EXPECT_TRUE(recycled.spans.empty()) << "no half-decoded request after an error";
  decodeProtobuf(bodies[1], recycled);
  expectSame(decodeProtobuf(bodies[1]), recycled);
}

// A document nested 200,000 deep (anywhere: an attribute value, the top level) is a clear
// OtlpError, not a stack overflow.
TEST(OtlpJson, DeeplyNestedDocumentsAreAClearError) {
  const std::string open(200000, '['), close(200000, ']');
  const std::string attr = R"({"resourceSpans":[{"scopeSpans":[{"spans":[{"attributes":[)"
                           R"({"key":"k","value":{"arrayValue":{"values":)" +
                           open + close + "}}}]}]}]}]}";
  for (const std::string& body : {open + close, attr, R"({"resourceSpans":)" + open}) {
    try {
      decodeJson(body);
      ADD_FAILURE() << "accepted";
    } catch (const OtlpError& e) {
      EXPECT_NE(std::string(e.what()).find("body is"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace perfhat::otlp
