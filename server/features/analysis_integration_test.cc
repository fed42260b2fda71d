// The real pipeline feeding the features: libclang parses a tiny TU, the analysis engine
// attaches production data and infers the rest, and the features render the snapshot.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "server/analysis/analyze.h"
#include "server/analysis/testing/test_tu.h"
#include "server/features/annotate.h"
#include "server/features/features.h"

namespace perfhat::features {
namespace {

using analysis::InMemoryFeedback;
using analysis::testing::TestTU;
using ::testing::HasSubstr;

constexpr double kMs = 1e6;

FeedbackItem item(const std::string& key, double p50_ns, double p90_ns) {
  FeedbackItem it;
  it.key = key;
  Stats s;
  s.count = 600;
  s.mean_ns = p50_ns;
  s.p50_ns = p50_ns;
  s.p90_ns = p90_ns;
  s.p95_ns = p90_ns;
  s.p99_ns = 2 * p90_ns;
  s.rate_per_s = 10;
  it.stats = s;
  return it;
}

// T4 on real code: a getter measured elsewhere, newly called inside two constant loops.
constexpr const char* kT4 = R"src(struct Backlog { int hours(int task) const; };
int estimate(const Backlog& b) {
  int total = 0;
  for (int i = 0; i < 10; ++i) {
    for (int j = 0; j < 20; ++j) {
      total += b.hours(j);
    }
  }
  return total;
}
)src";

class FeaturesOnRealAnalysis : public ::testing::Test {
 protected:
  void SetUp() override {
    TestTU t;
    t.code = kT4;
    FeedbackItem getter = item("Backlog::hours(int) const", 2 * kMs, 3 * kMs);
    CallSiteStats elsewhere;
    elsewhere.caller = "report()";
    elsewhere.count = 100;
    elsewhere.mean_ns = 2 * kMs;
    elsewhere.p50_ns = 2 * kMs;
    elsewhere.caller_rate_per_s = 3;
    getter.callsites = {elsewhere};
    InMemoryFeedback view({item("estimate(const Backlog &)", 5 * kMs, 6 * kMs), getter});
    snapshot = t.analyze(view);
    ASSERT_NE(snapshot, nullptr);
  }
  analysis::SnapshotPtr snapshot;
};

TEST_F(FeaturesOnRealAnalysis, HintsShowTheNestedLoopProduct) {
  const std::vector<InlayHint> hints = inlayHints(*snapshot, {{0, 0}, {100, 0}}, Options());
  std::vector<std::string> on_line3, on_line5;
  for (const InlayHint& h : hints) {
    if (h.position.line == 3) on_line3.push_back(h.label);
    if (h.position.line == 5) on_line5.push_back(h.label);
  }
  EXPECT_THAT(on_line3, ::testing::ElementsAre("≈ 400 ms (10 × 40 ms)"));
  EXPECT_THAT(on_line5, ::testing::ElementsAre("~⏱ 2 ms"));
}

TEST_F(FeaturesOnRealAnalysis, RegressionWarningPointsAtTheGetter) {
  const std::vector<Diagnostic> d = diagnostics(*snapshot, Options());
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].code, "perfhat.regression");
  EXPECT_EQ(d[0].range.start.line, 5);
  // 5 ms measured; predicted 5 ms + 10 × 20 × 2 ms = 405 ms.
  EXPECT_THAT(d[0].message, HasSubstr("Predicted +400 ms per call of estimate()"));
  EXPECT_THAT(d[0].message, HasSubstr("(2 ms) × 10 × 20 iterations"));
}

TEST_F(FeaturesOnRealAnalysis, LensHoverAndAnnotatedSource) {
  const std::vector<CodeLens> lenses = codeLenses(*snapshot, Options());
  ASSERT_EQ(lenses.size(), 2u);
  EXPECT_EQ(lenses[0].title, "prod p50 5 ms · p99 12 ms · 600 calls/min");
  EXPECT_EQ(lenses[1].title, "predicted +400 ms (+8000 %)");
  const auto h = hover(*snapshot, {5, 16}, Options());  // on b.hours(j)
  ASSERT_TRUE(h);
  EXPECT_THAT(h->markdown, HasSubstr("model `callsite-regression`"));
  const std::string out = annotateSource(kT4, *snapshot, Options(), false);
  EXPECT_THAT(out, HasSubstr("for (int i = 0; i < 10; ++i) {   ≈ 400 ms (10 × 40 ms)\n"));
  EXPECT_THAT(out, HasSubstr("warning perfhat.regression: Predicted +400 ms"));
}

// A new call in an `if` without data on branch frequency: the analysis assumes both arms
// equally likely, and the diagnostic says so.
TEST(FeaturesOnRealAnalysisBranch, AssumedBranchProbabilityShowsInHintAndWarning) {
  TestTU t;
  t.code = R"src(int slow(int n);
int handle(bool cold) {
  int t = 0;
  if (cold) {
    t += slow(1);
  }
  return t;
}
)src";
  FeedbackItem callee = item("slow(int)", 10 * kMs, 10 * kMs);
  CallSiteStats elsewhere;
  elsewhere.caller = "other()";
  elsewhere.count = 50;
  elsewhere.mean_ns = 10 * kMs;
  elsewhere.p50_ns = 10 * kMs;
  elsewhere.caller_rate_per_s = 1;
  callee.callsites = {elsewhere};
  InMemoryFeedback view({item("handle(bool)", 1 * kMs, 1 * kMs), callee});
  analysis::SnapshotPtr s = t.analyze(view);
  ASSERT_NE(s, nullptr);
  std::vector<std::string> line3;
  for (const InlayHint& h : inlayHints(*s, {{3, 0}, {3, 100}}, Options())) line3.push_back(h.label);
  EXPECT_THAT(line3, ::testing::ElementsAre("~⏱ 5 ms (50 %)"));
  // The branch weight is assumed and handle()'s measured 1 ms has room for slow() taken now and
  // then (≤ 10 % of calls): the call may already run in production, so it is possibly new
  // (information), not a regression.
  const std::vector<Diagnostic> d = diagnostics(*s, Options());
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].range.start.line, 4);
  EXPECT_EQ(d[0].severity, Severity::Information);
  EXPECT_EQ(d[0].code, "perfhat.possibly-new");
  EXPECT_THAT(d[0].message, HasSubstr("adds ~5 ms per call of handle(): slow() (10 ms) × 50 % "
                                      "branch = 5 ms"));
  const auto h = hover(*s, {3, 3}, Options());  // on `if`
  ASSERT_TRUE(h);
  EXPECT_THAT(h->markdown, HasSubstr("Taken with probability 50 %"));
  EXPECT_THAT(h->markdown, HasSubstr("equally likely"));
}

}  // namespace
}  // namespace perfhat::features
