#include <algorithm>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "server/features/features.h"
#include "server/features/test_snapshot.h"

namespace perfhat::features {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using namespace testing;  // NOLINT: fixture helpers

std::vector<std::string> labels(const std::vector<InlayHint>& hints) {
  std::vector<std::string> out;
  out.reserve(hints.size());
  for (const InlayHint& h : hints) out.push_back(h.label);
  return out;
}

TEST(FeaturesInlayHints, T4NestedLoopsShowTheProduct) {
  const T4 t;
  const std::vector<InlayHint> hints = inlayHints(t.snapshot, everything(), Options());
  EXPECT_THAT(labels(hints),
              ElementsAre("~⏱ 4.13 s (prod 410 ms)", "⏱ 3 ms", "≈ 3.87 s (100 × 38.7 ms)",
                          "⏱ 1.5 ms", "≈ 37.2 ms (3 × 12.4 ms)", "~⏱ 12.4 ms"));
  // Kinds let the client style measured and predicted figures differently.
  EXPECT_EQ(hints[1].kind, HintKind::Measured);
  EXPECT_EQ(hints[5].kind, HintKind::Predicted);
  EXPECT_EQ(hints[5].position, t.tasks_range.end);
  EXPECT_EQ(hints[2].position, t.outer_header.end);
  EXPECT_THAT(hints[5].tooltip, HasSubstr("predicted (callee-overall)"));
  EXPECT_THAT(hints[5].tooltip, HasSubstr("assumes no call-site workload data"));
  EXPECT_THAT(hints[2].tooltip, HasSubstr("100 iterations (production loop data)"));
  EXPECT_THAT(hints[1].tooltip, HasSubstr("p50 3 ms · p99 9 ms · 1.2k calls/min"));
}

// A call inside an algorithm's lambda is a node of f's loop and of the lambda's function at the
// same place: the lambda's shows the hint, f's does not add a second one.
TEST(FeaturesInlayHints, ACallInAnAlgorithmsLambdaHasNoSecondHintFromTheFunction) {
  T4 t;
  t.snapshot.functions[0].nodes[t.tasks].call.via_lambda = true;
  const std::vector<InlayHint> hints = inlayHints(t.snapshot, everything(), Options());
  EXPECT_THAT(labels(hints),
              ElementsAre("~⏱ 4.13 s (prod 410 ms)", "⏱ 3 ms", "≈ 3.87 s (100 × 38.7 ms)",
                          "⏱ 1.5 ms", "≈ 37.2 ms (3 × 12.4 ms)"));
}

TEST(FeaturesInlayHints, HonoursTheRequestedRange) {
  const T4 t;
  // Only lines 6–7: the inner loop and the getter.
  const std::vector<InlayHint> hints = inlayHints(t.snapshot, {{6, 0}, {7, 200}}, Options());
  EXPECT_THAT(labels(hints), ElementsAre("≈ 37.2 ms (3 × 12.4 ms)", "~⏱ 12.4 ms"));
  // A range that ends right where a hint sits includes it; one before the file shows nothing.
  EXPECT_THAT(labels(inlayHints(t.snapshot, {{7, 0}, t.tasks_range.end}, Options())),
              ElementsAre("~⏱ 12.4 ms"));
  EXPECT_TRUE(inlayHints(t.snapshot, {{0, 0}, {1, 0}}, Options()).empty());
}

TEST(FeaturesInlayHints, DesignProfileShowsTotalsLoopsPredictionsAndBigShares) {
  T4 t;
  Options o;
  o.profile = Profile::Design;
  // storyPoints (1.5 ms × 100 = 150 ms of 4.13 s) and stories() (3 ms) are below 10 %.
  EXPECT_THAT(labels(inlayHints(t.snapshot, everything(), o)),
              ElementsAre("~⏱ 4.13 s (prod 410 ms)", "≈ 3.87 s (100 × 38.7 ms)",
                          "≈ 37.2 ms (3 × 12.4 ms)", "~⏱ 12.4 ms"));
  // Make storyPoints expensive: 100 × 20 ms = 2 s is over half of the total, so it shows.
  analysis::Node& points = t.snapshot.functions[0].nodes[t.points];
  points.estimate = measured(stats(5000, 20e6, 30e6, 50e6));
  EXPECT_THAT(labels(inlayHints(t.snapshot, everything(), o)), ::testing::Contains("⏱ 20 ms"));
  o.design_min_share = 0.9;
  EXPECT_THAT(labels(inlayHints(t.snapshot, everything(), o)),
              ::testing::Not(::testing::Contains("⏱ 20 ms")));
}

TEST(FeaturesInlayHints, HintsThatSayNothingAreLeftOutInEveryProfile) {
  // A negligible leaf call (predicted 0 ns), a branch with nothing known, and a standard-library
  // call without data would each print noise; a user call without data still shows `?`.
  const std::string_view src =
      "void f() {\n  v.push_back(1);\n  if (a.ok()) { b(); }\n  mine();\n}\n";
  FunctionBuilder b("f", "f()", {{0, 0}, {4, 1}}, find(src, 0, "f"), find(src, 0, "f()").end);
  b.total(unknown());
  const int push = b.call(0, "push_back", find(src, 1, "v.push_back(1)"), unknown());
  b.node(push).call.system = true;
  const int branch = b.branch(0, {{2, 2}, {2, 22}}, find(src, 2, "a.ok())").end, 0.5, unknown());
  b.call(branch, "ok", find(src, 2, "a.ok()"),
         inferred(0, analysis::Model::Leaf, analysis::fact::Negligible{}));
  b.call(0, "mine", find(src, 3, "mine()"), unknown());
  Snapshot s;
  s.functions.push_back(b.build());
  for (Profile p : {Profile::Debug, Profile::Design}) {
    Options o;
    o.profile = p;
    std::vector<std::string> shown = labels(inlayHints(s, everything(), o));
    EXPECT_THAT(shown, ::testing::Not(::testing::Contains(HasSubstr("0 ns")))) << int(p);
    if (p == Profile::Debug) {
      EXPECT_THAT(shown, ElementsAre("⏱ ?", "⏱ ?"));  // f() and mine()
    }
  }
}

TEST(FeaturesInlayHints, UnknownIsQuestionMarkNeverZero) {
  const std::string_view src = "void f() {\n  g();\n  while (more()) { h(); }\n}\n";
  FunctionBuilder b("f", "f()", {{0, 0}, {3, 1}}, find(src, 0, "f"), find(src, 0, "f()").end);
  b.total(unknown());
  b.call(0, "g", find(src, 1, "g()"), unknown(analysis::fact::NoData{{"g", ""}}));
  const int loop =
      b.loop(0, analysis::LoopKind::While, {{2, 2}, {2, 25}}, find(src, 2, "more())").end,
             std::nullopt, IterationSource::None, unknown());
  b.call(loop, "h", find(src, 2, "h()"), measured(stats(10, 2e3, 3e3, 5e3)),
         stats(10, 2e3, 3e3, 5e3));
  Snapshot s;
  s.functions.push_back(b.build());
  const std::vector<InlayHint> hints = inlayHints(s, everything(), Options());
  EXPECT_THAT(labels(hints), ElementsAre("⏱ ?", "⏱ ?", "⏱ ?", "⏱ 2 µs"));
  EXPECT_EQ(hints[1].kind, HintKind::Unknown);
  EXPECT_THAT(hints[1].tooltip, HasSubstr("no production data"));
  EXPECT_THAT(hints[2].tooltip, HasSubstr("iteration count unknown"));
  for (const InlayHint& h : hints) EXPECT_THAT(h.label, ::testing::Not(HasSubstr("0 ns")));
}

TEST(FeaturesInlayHints, AssumedIterationsAreMarked) {
  T4 t;
  analysis::Node& inner = t.snapshot.functions[0].nodes[t.inner];
  inner.loop.iterations = 10;
  inner.loop.iteration_source = IterationSource::Default;
  inner.estimate =
      inferred(124e6, analysis::Model::Loop,
               analysis::fact::LoopProduct{10, analysis::fact::LoopProduct::Body::Known, 12.4e6},
               {}, {analysis::fact::DefaultIterations{10}});
  const std::vector<InlayHint> hints = inlayHints(t.snapshot, {{6, 0}, {6, 200}}, Options());
  ASSERT_EQ(hints.size(), 1u);
  EXPECT_EQ(hints[0].label, "≈ 124 ms (~10 × 12.4 ms)");
  EXPECT_THAT(hints[0].tooltip, HasSubstr("default, assumed"));
  EXPECT_THAT(hints[0].tooltip, HasSubstr("assumes default 10 iterations"));
}

TEST(FeaturesInlayHints, MainStatisticAndStaleData) {
  T4 t;
  t.snapshot.stale = true;
  Options o;
  o.main_statistic = "mean";
  const std::vector<InlayHint> hints = inlayHints(t.snapshot, {{4, 0}, t.stories_range.end}, o);
  ASSERT_EQ(hints.size(), 1u);
  EXPECT_EQ(hints[0].label, "⏱ 3.3 ms");  // mean = 1.1 × p50 in the fixture
  EXPECT_THAT(hints[0].tooltip, HasSubstr("mean 3.3 ms"));
  EXPECT_THAT(hints[0].tooltip, HasSubstr("cached data"));
}

TEST(FeaturesInlayHints, BranchesShowTheirProbability) {
  const std::string_view src = "void f(bool x) {\n  if (x) { g(); }\n}\n";
  FunctionBuilder b("f", "f(bool)", {{0, 0}, {2, 1}}, find(src, 0, "f"), {0, 14});
  b.total(inferred(3e6, analysis::Model::Sum, analysis::fact::PartsSum{1, 3e6}));
  const int br = b.branch(
      0, {{1, 2}, {1, 17}}, find(src, 1, "if (x)").end, 0.25,
      inferred(3e6, analysis::Model::Branch, analysis::fact::ArmsWeighted{0.25, 0.75, false}, {},
               {analysis::fact::EqualArms{2, 0.5}}));
  b.call(br, "g", find(src, 1, "g()"), measured(stats(10, 12e6, 13e6, 14e6)));
  Snapshot s;
  s.functions.push_back(b.build());
  EXPECT_THAT(labels(inlayHints(s, everything(), Options())),
              ElementsAre("~⏱ 3 ms", "~⏱ 3 ms (25 %)", "⏱ 12 ms"));
}

}  // namespace
}  // namespace perfhat::features
