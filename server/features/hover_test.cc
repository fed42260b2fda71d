#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "server/features/features.h"
#include "server/features/test_snapshot.h"

namespace perfhat::features {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using namespace testing;  // NOLINT: fixture helpers

TEST(FeaturesHover, MeasuredCallShowsProductionStatistics) {
  T4 t;
  t.snapshot.functions[0].nodes[t.stories].measured->window = {"2026-11-21T00:00:00Z", ""};
  const auto h = hover(t.snapshot, {4, t.stories_range.start.column + 3}, Options());
  ASSERT_TRUE(h);
  EXPECT_EQ(h->range, t.stories_range);
  const std::string& md = h->markdown;
  EXPECT_THAT(md, HasSubstr("### stories()"));
  EXPECT_THAT(md, HasSubstr("`agile::stories()`"));
  EXPECT_THAT(md, HasSubstr("**⏱ p50 3 ms** per call — measured in production"));
  EXPECT_THAT(md, HasSubstr("| calls | 1.2k (3 errors · 0.25 %) |"));
  EXPECT_THAT(md, HasSubstr("| rate | 1.2k calls/min |"));
  EXPECT_THAT(md, HasSubstr("| mean | 3.3 ms |"));
  EXPECT_THAT(md, HasSubstr("| p50 · p90 · p95 · p99 | 3 ms · 4 ms · 6.5 ms · 9 ms |"));
  EXPECT_THAT(md, HasSubstr("| window | 2026-11-21T00:00:00Z → now |"));
  EXPECT_THAT(md, HasSubstr("| versions | 1.4.2 |"));
  EXPECT_THAT(md, HasSubstr("| hosts | app-1 |"));
  EXPECT_THAT(md, Not(HasSubstr("**Prediction**")));
}

// Calls the service's exporters lost lower the counts: the hover says so beside them.
TEST(FeaturesHover, ExporterLossesAreShownBesideTheCounts) {
  T4 t;
  const auto before = hover(t.snapshot, {4, t.stories_range.start.column + 3}, Options());
  ASSERT_TRUE(before);
  EXPECT_THAT(before->markdown, Not(HasSubstr("lost in export")));
  t.snapshot.functions[0].nodes[t.stories].dropped_calls = 2048;
  const auto h = hover(t.snapshot, {4, t.stories_range.start.column + 3}, Options());
  ASSERT_TRUE(h);
  EXPECT_THAT(h->markdown,
              HasSubstr("| calls | 1.2k (3 errors · 0.25 %) |\n| lost in export | ≥ 2.05k calls of "
                        "its service in this window: counts and rates may be low |"));
}

// Probe distribution (issue 23): the counts come from part of the fleet, and the hover says
// which; a call no variant probed says "not probed", not "no data".
TEST(FeaturesHover, ExposureIsShownBesideTheCountsAndUnprobedIsNotNoData) {
  T4 t;
  Exposure e;
  e.releases = {"r7"};
  e.replicas = 36;
  e.replicas_probed = 9;
  e.traffic_share = 0.24;
  e.traffic_basis = "requests";
  e.observed_count = 288;
  t.snapshot.functions[0].nodes[t.stories].exposure = e;
  const auto h = hover(t.snapshot, {4, t.stories_range.start.column + 3}, Options());
  ASSERT_TRUE(h);
  EXPECT_THAT(h->markdown,
              HasSubstr("| exposure | observed on 9 of 36 replicas, 24 % of traffic (release r7); "
                        "counts scaled to all traffic from 288 observed |"));

  Node& fn = t.snapshot.functions[0].nodes[0];
  fn.measured.reset();
  fn.estimate = unknown();
  e.replicas_probed = 0;
  e.traffic_share = 0;
  fn.exposure = e;
  const auto f = hover(t.snapshot, t.fn().name_range.start, Options());
  ASSERT_TRUE(f);
  EXPECT_THAT(f->markdown, HasSubstr("**⏱ ?** — not probed in release r7: no variant of its 36 "
                                     "replicas carries this probe."));
  EXPECT_THAT(f->markdown, Not(HasSubstr("no production data")));
}

// A callee whose body in the workspace is not the one production ran: the snapshot says which
// body and revision, the hover says what that means for the measured values.
TEST(FeaturesHover, ACalleeChangedSinceProductionIsMarked) {
  T4 t;
  const auto before = hover(t.snapshot, {4, t.stories_range.start.column + 3}, Options());
  ASSERT_TRUE(before);
  EXPECT_THAT(before->markdown, Not(HasSubstr("has changed since production ran")));
  t.snapshot.functions[0].nodes[t.stories].call.callee_changed = analysis::CallFacts::ChangedBody{
      "stories", "/src/agile/store.cc", "0123456789abcdef0123456789abcdef01234567"};
  const auto h = hover(t.snapshot, {4, t.stories_range.start.column + 3}, Options());
  ASSERT_TRUE(h);
  EXPECT_THAT(h->markdown, HasSubstr("⚠ The body of stories in store.cc has changed since "
                                     "production ran it (0123456789ab): its measured values "
                                     "describe the old body."));
}

// A virtual call resolved from call-site data lists the implementations that ran, each with
// its own numbers.
TEST(FeaturesHover, AVirtualCallListsTheImplementationsThatRan) {
  T4 t;
  auto& n = t.snapshot.functions[0].nodes[t.stories];
  Stats a;
  a.count = 900;
  a.mean_ns = 2e6;
  Stats b;
  b.count = 300;
  b.mean_ns = 6e6;
  n.call.is_virtual = true;
  n.call.implementations = {{"agile::SqlStore::stories()", a},
                            {"agile::CachedStore::stories()", b}};
  const auto h = hover(t.snapshot, {4, t.stories_range.start.column + 3}, Options());
  ASSERT_TRUE(h);
  EXPECT_THAT(h->markdown, HasSubstr("| implementations (overall) | calls | mean |\n|---|---|---|\n"
                                     "| `agile::SqlStore::stories()` | 900 | 2 ms |\n"
                                     "| `agile::CachedStore::stories()` | 300 | 6 ms |"));
  n.call.implementations.resize(1);  // one implementation: the statistics above are its own
  const auto one = hover(t.snapshot, {4, t.stories_range.start.column + 3}, Options());
  ASSERT_TRUE(one);
  EXPECT_THAT(one->markdown, Not(HasSubstr("implementations")));
}

TEST(FeaturesHover, PredictionShowsDerivationAndDistribution) {
  const T4 t;
  const auto h = hover(t.snapshot, t.tasks_range.start, Options());
  ASSERT_TRUE(h);
  const std::string& md = h->markdown;
  EXPECT_THAT(md, HasSubstr("**~⏱ p50 12.4 ms** per call — predicted"));
  EXPECT_THAT(md, HasSubstr("**Prediction** — model `callee-overall`: "));
  EXPECT_THAT(md, HasSubstr(" (getTasks() overall, 300 calls)\n"));
  EXPECT_THAT(md, HasSubstr("Inputs:\n- getTasks(): mean "));
  EXPECT_THAT(md, HasSubstr("Assumptions:\n- no call-site workload data: the callee's overall "
                            "distribution is used"));
  EXPECT_THAT(md, HasSubstr("Distribution: mean 13.6 ms · p50 12.4 ms · p90 18.6 ms · p99 "
                            "37.2 ms (300 samples)"));
  EXPECT_THAT(md, Not(HasSubstr("| production |")));
}

// The cost a new call adds is listed once on it: the same derivation the warning prints.
TEST(FeaturesHover, ANewCallsAddedCostIsListedOnce) {
  const T4 t;
  const auto h = hover(t.snapshot, t.tasks_range.start, Options());
  ASSERT_TRUE(h);
  const std::string& md = h->markdown;
  const std::string heading = "New cost counted in the prediction";
  const size_t first = md.find(heading);
  ASSERT_NE(first, std::string::npos) << md;
  EXPECT_EQ(md.find(heading, first + 1), std::string::npos) << md;
}

TEST(FeaturesHover, LoopShowsIterationsTheirSourceAndTheBody) {
  const T4 t;
  const auto h = hover(t.snapshot, {4, 4}, Options());  // on "for"
  ASSERT_TRUE(h);
  EXPECT_EQ(h->range, t.outer_header);
  const std::string& md = h->markdown;
  EXPECT_THAT(md, HasSubstr("### range-for loop"));
  EXPECT_THAT(md, HasSubstr("**~⏱ p50 3.87 s** for the whole loop"));
  EXPECT_THAT(md, HasSubstr("Iterations: **100** (production loop data) × 38.7 ms per iteration"));
  // Body, most expensive first.
  EXPECT_THAT(md, HasSubstr("Body, per iteration:\n- for loop ~37.2 ms\n- stories() (once) 3 ms\n"
                            "- storyPoints() 1.5 ms\n"));
}

TEST(FeaturesHover, FunctionNameShowsMatchAndTheChange) {
  const T4 t;
  const auto h = hover(t.snapshot, t.fn().name_range.start, Options());
  ASSERT_TRUE(h);
  EXPECT_EQ(h->range, t.fn().name_range);
  const std::string& md = h->markdown;
  EXPECT_THAT(md, HasSubstr("Code changed: predicted 4.13 s vs 410 ms in production (+907 %)"));
  EXPECT_THAT(md, HasSubstr("| matched by | exact key |"));
  EXPECT_THAT(md, HasSubstr("| versions | 1.4.2, 1.4.3 |"));
  EXPECT_THAT(md, Not(HasSubstr("| baseline |")));
}

TEST(FeaturesHover, BaselineComparison) {
  T4 t;
  analysis::Node& root = t.snapshot.functions[0].nodes[0];
  root.baseline = stats(900, 205e6, 300e6, 600e6);
  const auto h = hover(t.snapshot, t.fn().name_range.start, Options());
  ASSERT_TRUE(h);
  EXPECT_THAT(h->markdown, HasSubstr("| baseline | p50 205 ms (+100 % now)"));
}

TEST(FeaturesHover, NothingOutsideNodesOrInBodies) {
  const T4 t;
  EXPECT_FALSE(hover(t.snapshot, {0, 3}, Options()));   // #include line
  EXPECT_FALSE(hover(t.snapshot, {3, 4}, Options()));   // `int total` inside the body
  EXPECT_FALSE(hover(t.snapshot, {10, 4}, Options()));  // `return`
}

TEST(FeaturesHover, UnknownSaysSoAndIsNotZero) {
  const std::string_view src = "void f() {\n  g();\n}\n";
  FunctionBuilder b("f", "f()", {{0, 0}, {2, 1}}, find(src, 0, "f"), {0, 8});
  b.call(0, "g", find(src, 1, "g()"), unknown());
  Snapshot s;
  s.stale = true;
  s.functions.push_back(b.build());
  const auto h = hover(s, {1, 2}, Options());
  ASSERT_TRUE(h);
  EXPECT_THAT(h->markdown, HasSubstr("**⏱ ?**"));
  EXPECT_THAT(h->markdown, HasSubstr("never counted as 0"));
  EXPECT_THAT(h->markdown, HasSubstr("_Cached data"));
  EXPECT_THAT(h->markdown, Not(HasSubstr("0 ns")));
}

}  // namespace
}  // namespace perfhat::features
