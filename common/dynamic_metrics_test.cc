#include "common/dynamic_metrics.h"

#include <gtest/gtest.h>

#include "common/feedback.h"

namespace perfhat {
namespace {

// The handler's documented example (docs/dynamic-metrics.md).
constexpr const char* kExample = R"({"key":"shop::Repo::load","service":"shop",
 "window":{"from":"2026-11-24T20:00:00Z","to":"2026-11-25T20:00:00Z"},
 "coverage":{"from":"2026-11-25T19:58:00Z","to":"2026-11-25T20:00:00Z"},
 "visits":20,"calls_per_hour":600,
 "callers":[{"key":"shop::Api::get","count":20}],
 "callees":[{"key":"shop::Db::query","count":20}],
 "fan_in":1,"fan_out":1,
 "self":{"p50_ns":150000,"mean_ns":150000},
 "inclusive":{"p50_ns":200000,"mean_ns":200000},
 "demand_ns":3000000,"demand_rank":2,"ranked_functions":3,
 "leaf":false,"never_called":false,"skew":null})";

TEST(DynamicMetrics, ParsesTheDocumentedAnswer) {
  const DynamicMetrics m = parseDynamicMetrics(kExample);
  EXPECT_EQ(m.key, "shop::Repo::load");
  EXPECT_EQ(m.window_to_s - m.window_from_s, 86400);
  EXPECT_EQ(*m.covered_to_s - *m.covered_from_s, 120);
  EXPECT_EQ(m.visits, 20);
  EXPECT_EQ(m.calls_per_hour, 600);
  ASSERT_EQ(m.callers.size(), 1u);
  EXPECT_EQ(m.callers[0], (DynamicNeighbour{"shop::Api::get", 20}));
  EXPECT_EQ(m.self_p50_ns, 150000);
  EXPECT_EQ(m.inclusive_mean_ns, 200000);
  EXPECT_EQ(m.demand_rank, 2u);
  EXPECT_EQ(m.ranked_functions, 3u);
  EXPECT_FALSE(coversWindow(m));  // two minutes of a day
}

TEST(DynamicMetrics, NullsStayAbsent) {
  const DynamicMetrics m = parseDynamicMetrics(
      R"({"key":"k","window":{"from":"2026-11-24T20:00:00Z","to":"2026-11-25T20:00:00Z"},
          "coverage":null,"visits":0,"calls_per_hour":null,"callers":[],"callees":[],
          "fan_in":0,"fan_out":0,"self":null,"inclusive":null,"demand_rank":null,
          "never_called":true})");
  EXPECT_FALSE(m.calls_per_hour);
  EXPECT_FALSE(m.self_p50_ns);
  EXPECT_FALSE(m.demand_rank);
  EXPECT_TRUE(m.never_called);
  EXPECT_FALSE(coversWindow(m));
}

TEST(DynamicMetrics, MalformedAnswersNameTheField) {
  for (
      const char* bad :
      {"[]", "{\"key\":1}", "{\"key\":\"k\"}",
       R"({"key":"k","window":{"from":"yesterday","to":"2026-11-25T20:00:00Z"}})",
       R"({"key":"k","window":{"from":"2026-11-24T20:00:00Z","to":"2026-11-25T20:00:00Z"},"callers":{}})",
       R"({"key":"k","window":{"from":"2026-11-24T20:00:00Z","to":"2026-11-25T20:00:00Z"},"fan_in":-1})"}) {
    EXPECT_THROW(parseDynamicMetrics(bad), FeedbackFormatError) << bad;
  }
}

TEST(DynamicMetrics, UtcSeconds) {
  EXPECT_EQ(parseUtcSeconds("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(parseUtcSeconds("2026-11-25T20:00:00Z"), 1795636800);
  EXPECT_EQ(parseUtcSeconds("2026-11-25T21:00:00.5+01:00"), 1795636800);
  EXPECT_FALSE(parseUtcSeconds("2026-02-30T00:00:00Z"));
  EXPECT_FALSE(parseUtcSeconds("2026-11-25T20:00:00"));
}

TEST(DynamicMetrics, CoverageNearBothEndsOfTheWindow) {
  DynamicMetrics m;
  m.window_from_s = 0;
  m.window_to_s = 86400;
  m.covered_from_s = 60;
  m.covered_to_s = 86400 - 60;
  EXPECT_TRUE(coversWindow(m));
  m.covered_from_s = 86400 / 10;  // started 2.4 h late: beyond 5 %
  EXPECT_FALSE(coversWindow(m));
  m.covered_from_s = 0;
  m.covered_to_s = 86400 / 2;  // stopped reporting half-way
  EXPECT_FALSE(coversWindow(m));
}

}  // namespace
}  // namespace perfhat
