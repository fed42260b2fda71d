#include "feedback-handler/ingest/aggregator.h"

#include <gtest/gtest.h>

#include "common/test_units.h"
#include "feedback-handler/ingest/span_key.h"

namespace perfhat::handler {
namespace {

using otlp::Span;

using perfhat::test_units::kT0;

Span span(const std::string& id, const std::string& parent, uint64_t start, uint64_t dur_ns,
          otlp::Attributes attrs) {
  Span s;
  s.trace_id = std::string(16, 'T');
  s.span_id = std::string(7, 'S') + id;
  if (!parent.empty()) s.parent_span_id = std::string(7, 'S') + parent;
  s.name = "span-" + id;
  s.start_unix_nano = start;
  s.end_unix_nano = start + dur_ns;
  s.attributes = std::move(attrs);
  return s;
}

TEST(SpanKey, PrefersMangledThenSignatureThenNameThenDeprecatedThenSpanName) {
  Span s = span("a", "", kT0, 10, {});
  s.name = "GET /x";
  EXPECT_EQ(identifySpan(s).key, normalizeKey("GET /x"));
  s.attributes = {{"code.function", std::string("price")},
                  {"code.namespace", std::string("shop::OrderService")}};
  EXPECT_EQ(identifySpan(s).key, normalizeKey("shop::OrderService::price"));
  s.attributes.push_back({"code.function.name", std::string("shop::Other::run")});
  EXPECT_EQ(identifySpan(s).key, normalizeKey("shop::Other::run"));
  s.attributes.push_back(
      {"code.function.signature", std::string("int shop::Other::run(const std::string&) const")});
  EXPECT_EQ(identifySpan(s).key, normalizeKey("shop::Other::run(const std::string &) const"));
  s.attributes.push_back({"code.function.mangled", std::string("_ZN4shop5Other3runEi")});
  SpanIdentity id = identifySpan(s);
  EXPECT_EQ(id.mangled, "_ZN4shop5Other3runEi");
  EXPECT_EQ(id.key, "shop::Other::run(int)");
  // A bogus mangled name falls through to the signature.
  s.attributes.back().second = std::string("not-mangled");
  EXPECT_NE(identifySpan(s).key, "not-mangled");
  EXPECT_TRUE(identifySpan(s).mangled.empty());
}

TEST(SpanKey, FileAndLineFromCurrentOrDeprecatedAttributes) {
  Span s = span("a", "", kT0, 10,
                {{"code.filepath", std::string("/src/a.cc")}, {"code.lineno", int64_t{12}}});
  SpanIdentity id = identifySpan(s);
  EXPECT_EQ(id.file, "/src/a.cc");
  EXPECT_EQ(id.line, 12);
  s.attributes = {{"code.file.path", std::string("/src/b.cc")},
                  {"code.line.number", std::string("7")}};
  id = identifySpan(s);
  EXPECT_EQ(id.file, "/src/b.cc");
  EXPECT_EQ(id.line, 7);
}

TEST(SpanKey, InvalidUtf8BecomesQuestionMarks) {
  EXPECT_EQ(sanitizeUtf8("ok \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),
            "ok \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
  EXPECT_EQ(sanitizeUtf8("a\xff"
                         "b\xc3"),
            "a?b?");
  EXPECT_EQ(sanitizeUtf8("\xc0\x80"), "??");       // overlong NUL
  EXPECT_EQ(sanitizeUtf8("\xed\xa0\x80"), "???");  // surrogate
  Span s = span("a", "", kT0, 10, {{"code.function.name", std::string("bad\xfe")}});
  EXPECT_EQ(identifySpan(s).key.find('\xfe'), std::string::npos);
}

TEST(Aggregator, FunctionsCallSitesLoopsSizesAndWeights) {
  otlp::ExportRequest r;
  r.resources.push_back({{"service.name", std::string("agile")},
                         {"service.version", std::string("1.4.2")},
                         {"deployment.environment", std::string("prod")},
                         {"host.name", std::string("h1")}});
  auto fn = [](const char* name) {
    return otlp::Attributes{{"code.function.name", std::string(name)}};
  };
  // parent P (input size 50) calls child C twice; C is sampled at weight 4 once.
  otlp::Attributes pa = fn("svc::P");
  pa.push_back({"perfhat.input.size", int64_t{50}});
  pa.push_back({"perfhat.result.size", int64_t{17}});
  r.spans.push_back(span("p", "", kT0, 1'000'000, pa));
  otlp::Attributes c1 = fn("svc::C");
  c1.push_back({"perfhat.sampling.weight", 4.0});
  r.spans.push_back(span("c", "p", kT0 + 10, 200'000, c1));
  Span c2 = span("d", "p", kT0 + 20, 300'000, fn("svc::C"));
  c2.status = otlp::StatusCode::kError;
  r.spans.push_back(c2);
  otlp::Attributes loop = fn("svc::P");
  loop.push_back({"perfhat.loop.ordinal", int64_t{1}});
  loop.push_back({"perfhat.loop.iterations", int64_t{25}});
  loop.push_back({"perfhat.loop.line", int64_t{42}});
  r.spans.push_back(span("l", "p", kT0 + 30, 500'000, loop));
  // An orphan child (parent not in this request) still counts as a function sample.
  r.spans.push_back(span("o", "zz", kT0 + 40, 100, fn("svc::C")));

  Batch b;
  IngestStats st = aggregate(r, b);
  EXPECT_EQ(st.spans, 5u);
  const int64_t bucket = static_cast<int64_t>(kT0) / kBucketNs;
  auto get = [&](AggKind k, const std::string& key, const std::string& sub) -> const AggValue* {
    AggKey ak{k, normalizeKey(key), sub, bucket, "agile", "1.4.2", "prod", ""};
    auto it = b.aggregates.find(ak);
    return it == b.aggregates.end() ? nullptr : &it->second;
  };
  const AggValue* p = get(AggKind::kFunction, "svc::P", "");
  ASSERT_TRUE(p);
  EXPECT_DOUBLE_EQ(p->sketch.count(), 1);  // the loop record is not a call of P
  const AggValue* c = get(AggKind::kFunction, "svc::C", "");
  ASSERT_TRUE(c);
  EXPECT_DOUBLE_EQ(c->sketch.count(), 6);  // 4 + 1 + 1
  EXPECT_DOUBLE_EQ(c->x1, 1);              // one error
  const AggValue* cs = get(AggKind::kCallSite, "svc::C", normalizeKey("svc::P"));
  ASSERT_TRUE(cs);
  EXPECT_DOUBLE_EQ(cs->sketch.count(), 5);
  EXPECT_DOUBLE_EQ(cs->x1, 1);   // one distinct parent
  EXPECT_DOUBLE_EQ(cs->x2, 50);  // its input size
  const AggValue* l = get(AggKind::kLoop, "svc::P", "1");
  ASSERT_TRUE(l);
  EXPECT_DOUBLE_EQ(l->sketch.mean(), 25);
  EXPECT_EQ(l->line, 42);
  const AggValue* sz = get(AggKind::kResultSize, "svc::P", "");
  ASSERT_TRUE(sz);
  EXPECT_DOUBLE_EQ(sz->sketch.mean(), 17);
  EXPECT_EQ(b.hosts.count({normalizeKey("svc::C"), "h1"}), 1u);
}

// Self time = duration − direct children's durations: children of the same request, and
// children of an earlier request that waited in the index for their parent; loop records and
// grandchildren are not direct children.
TEST(Aggregator, SelfTimeSubtractsDirectChildrenOfThisAndEarlierRequests) {
  auto fn = [](const char* name) {
    return otlp::Attributes{{"code.function.name", std::string(name)}};
  };
  SpanIndexOptions io;
  io.now_ns = [] { return int64_t{0}; };
  SpanIndex index(io);
  otlp::ExportRequest early;  // a child and its own child, exported before the parent
  early.spans.push_back(span("c", "p", kT0 + 10, 300'000, fn("svc::C")));
  early.spans.push_back(span("g", "c", kT0 + 20, 100'000, fn("svc::G")));
  otlp::ExportRequest late;
  late.spans.push_back(span("p", "", kT0, 1'000'000, fn("svc::P")));
  late.spans.push_back(span("d", "p", kT0 + 400'000, 200'000, fn("svc::C")));
  otlp::Attributes loop = fn("svc::P");
  loop.push_back({"perfhat.loop.ordinal", int64_t{1}});
  loop.push_back({"perfhat.loop.iterations", int64_t{3}});
  late.spans.push_back(span("l", "p", kT0 + 30, 500'000, loop));
  // A call made inside the loop record is a child of P as well.
  late.spans.push_back(span("i", "l", kT0 + 40, 50'000, fn("svc::G")));
  Batch b;
  aggregate(early, b, &index);
  aggregate(late, b, &index);
  const int64_t bucket = static_cast<int64_t>(kT0) / kBucketNs;
  auto self = [&](const char* key) {
    auto it = b.aggregates.find(AggKey{AggKind::kSelfTime, normalizeKey(key), "", bucket});
    return it == b.aggregates.end() ? DDSketch{} : it->second.sketch;
  };
  EXPECT_DOUBLE_EQ(self("svc::P").count(), 1);
  EXPECT_DOUBLE_EQ(self("svc::P").sum(), 1'000'000 - 300'000 - 200'000 - 50'000);
  EXPECT_DOUBLE_EQ(self("svc::C").count(), 2);
  EXPECT_DOUBLE_EQ(self("svc::C").sum(), (300'000 - 100'000) + 200'000);
  EXPECT_DOUBLE_EQ(self("svc::G").sum(), 100'000 + 50'000);
}

}  // namespace
}  // namespace perfhat::handler
