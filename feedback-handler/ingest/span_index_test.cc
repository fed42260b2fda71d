// Call-site edges across export requests (span_index.h): a child and its parent exported in
// different requests still make one edge, in either order; the index stays bounded and counts
// what it drops.
#include "feedback-handler/ingest/span_index.h"

#include <gtest/gtest.h>

#include "common/test_units.h"
#include "feedback-handler/ingest/aggregator.h"
#include "feedback-handler/ingest/span_key.h"

namespace perfhat::handler {
namespace {

using perfhat::test_units::kT0;

otlp::Span span(const std::string& trace, const std::string& id, const std::string& parent,
                const char* fn, uint64_t dur, otlp::Attributes extra = {}) {
  otlp::Span s;
  s.trace_id = std::string(15, 'T') + trace;
  s.span_id = std::string(7, 'S') + id;
  if (!parent.empty()) s.parent_span_id = std::string(7, 'S') + parent;
  s.name = fn;
  s.start_unix_nano = kT0;
  s.end_unix_nano = kT0 + dur;
  s.attributes = {{"code.function.name", std::string(fn)}};
  for (auto& a : extra) s.attributes.push_back(std::move(a));
  return s;
}

otlp::ExportRequest request(std::vector<otlp::Span> spans) {
  otlp::ExportRequest r;
  r.resources.push_back({{"service.name", std::string("svc")}});
  r.spans = std::move(spans);
  return r;
}

const AggValue* edge(const Batch& b, const char* callee, const char* caller) {
  AggKey k{AggKind::kCallSite,
           normalizeKey(callee),
           normalizeKey(caller),
           static_cast<int64_t>(kT0) / kBucketNs,
           "svc",
           "",
           "",
           ""};
  auto it = b.aggregates.find(k);
  return it == b.aggregates.end() ? nullptr : &it->second;
}

TEST(SpanIndex, ChildBeforeParentLinksWhenTheParentArrives) {
  SpanIndex index;
  Batch first, second;
  // Two children of P exported first (SDKs export spans as they end), P in the next request.
  aggregate(request({span("1", "a", "p", "svc::C", 100), span("1", "b", "p", "svc::C", 300)}),
            first, &index);
  EXPECT_EQ(edge(first, "svc::C", "svc::P"), nullptr);
  EXPECT_EQ(index.counters().waiting, 2u);
  aggregate(request({span("1", "p", "", "svc::P", 1000, {{"perfhat.input.size", int64_t{8}}})}),
            second, &index);
  const AggValue* e = edge(second, "svc::C", "svc::P");
  ASSERT_NE(e, nullptr);
  EXPECT_DOUBLE_EQ(e->sketch.count(), 2);
  EXPECT_DOUBLE_EQ(e->x1, 1);  // one distinct parent
  EXPECT_DOUBLE_EQ(e->x2, 8);  // its input size
  EXPECT_EQ(index.counters().waiting, 0u);
  EXPECT_EQ(index.counters().linked, 2u);
}

TEST(SpanIndex, ParentBeforeChildLinksAndCountsTheParentOncePerEdge) {
  SpanIndex index;
  Batch b1, b2, b3;
  // P and one child C in the first request; another C of the same P later, then a D.
  aggregate(request({span("1", "p", "", "svc::P", 1000), span("1", "a", "p", "svc::C", 10)}), b1,
            &index);
  ASSERT_NE(edge(b1, "svc::C", "svc::P"), nullptr);
  EXPECT_DOUBLE_EQ(edge(b1, "svc::C", "svc::P")->x1, 1);
  aggregate(request({span("1", "b", "p", "svc::C", 20), span("1", "d", "p", "svc::D", 5)}), b2,
            &index);
  const AggValue* c = edge(b2, "svc::C", "svc::P");
  ASSERT_NE(c, nullptr);
  EXPECT_DOUBLE_EQ(c->sketch.count(), 1);
  EXPECT_DOUBLE_EQ(c->x1, 0);  // P already counted for the C edge
  const AggValue* d = edge(b2, "svc::D", "svc::P");
  ASSERT_NE(d, nullptr);
  EXPECT_DOUBLE_EQ(d->x1, 1);  // first D child of P
  // Same span id in another trace is another span: no edge.
  aggregate(request({span("2", "c", "p", "svc::C", 20)}), b3, &index);
  EXPECT_EQ(edge(b3, "svc::C", "svc::P"), nullptr);
}

TEST(SpanIndex, WithoutTheIndexCrossRequestEdgesAreLeftOut) {
  Batch b1, b2;
  aggregate(request({span("1", "a", "p", "svc::C", 100)}), b1);
  aggregate(request({span("1", "p", "", "svc::P", 1000)}), b2);
  EXPECT_EQ(edge(b1, "svc::C", "svc::P"), nullptr);
  EXPECT_EQ(edge(b2, "svc::C", "svc::P"), nullptr);
}

TEST(SpanIndex, BoundedByCapacityAndTtlWithCountedEvictions) {
  int64_t now = 0;
  SpanIndexOptions o;
  o.max_spans = 10;
  o.max_waiting = 5;
  o.ttl = std::chrono::seconds(60);
  o.now_ns = [&] { return now; };
  SpanIndex index(o);
  for (int i = 0; i < 25; ++i) {
    Batch b;
    aggregate(request({span("1", std::string(1, static_cast<char>('A' + i)), "", "svc::P", 10)}), b,
              &index);
  }
  SpanIndex::Counters c = index.counters();
  EXPECT_EQ(c.spans, 10u);
  EXPECT_EQ(c.spans_evicted, 15u);
  // Eight orphans whose parents never come: capacity drops three, the TTL the other five.
  for (int i = 0; i < 8; ++i) {
    Batch b;
    aggregate(request({span("3", std::string(1, static_cast<char>('a' + i)),
                            std::string(1, static_cast<char>('0' + i)), "svc::C", 10)}),
              b, &index);
  }
  c = index.counters();
  EXPECT_EQ(c.waiting, 5u);
  EXPECT_EQ(c.waiting_evicted, 3u);
  now += std::chrono::nanoseconds(std::chrono::seconds(61)).count();
  Batch late;
  aggregate(request({span("3", "7", "", "svc::P", 10)}), late, &index);  // parent of the last one
  EXPECT_EQ(edge(late, "svc::C", "svc::P"), nullptr) << "expired children must not link";
  c = index.counters();
  EXPECT_EQ(c.waiting, 0u);
  EXPECT_EQ(c.waiting_expired, 5u);
  EXPECT_EQ(c.spans_expired, 10u);
  EXPECT_EQ(c.spans, 1u);
}

}  // namespace
}  // namespace perfhat::handler
