// The derivation's words: the same duration formatter as every other figure of the hover.
#include "server/features/derivation_text.h"

#include <gtest/gtest.h>

#include "server/features/features.h"

namespace perfhat::features {
namespace {

namespace fact = analysis::fact;

TEST(FeaturesDerivationText, DurationsReadAsEverywhereElse) {
  // One formatter: "1.5 ms" in the derivation, as in the hint and the distribution line.
  EXPECT_EQ(summaryText(fact::LoopProduct{10, fact::LoopProduct::Body::Known, 1.5e6}),
            "10 × " + formatDuration(1.5e6));
  EXPECT_EQ(summaryText(fact::LoopProduct{10, fact::LoopProduct::Body::Known, 1.5e6}),
            "10 × 1.5 ms");
  EXPECT_EQ(summaryText(fact::MeasuredPlusNew{410e6, 3.72e9}), "measured 410 ms + new 3.72 s");
  EXPECT_EQ(summaryText(fact::Summary{}), "");
}

TEST(FeaturesDerivationText, NestedInputsSayWhereTheySit) {
  fact::Input in{{{fact::Scope::PerIteration}, {fact::Scope::Arm, 1}},
                 fact::PartCost{analysis::NodeKind::Call, "load()", 3, 2e6}};
  EXPECT_EQ(inputText(in), "per iteration: arm 1: load(): 2 ms");
  EXPECT_EQ(inputText({{}, fact::ChangedCall{fact::CallChange::Removed, "old()", {10, 0.5}, 2e6}}),
            "removed call old(): −10 × 0.5 × 2 ms");
}

TEST(FeaturesDerivationText, AssumptionsCarryTheirNumbers) {
  EXPECT_EQ(assumptionText(fact::DefaultIterations{10}),
            "default 10 iterations: no loop data, producer size, trip count or annotation");
  EXPECT_EQ(assumptionText(fact::UnknownParts{{"g()", ""}}),
            "2 part(s) without data not counted: g(), a nested block");
  EXPECT_EQ(assumptionText(fact::WeakFit{0.75}),
            "weak fit: shrunk toward the call sites' mean latency by 0.25 (adjusted R² 0.75)");
  EXPECT_EQ(
      assumptionText(fact::FirstAccessHere{{{"tasks()", "storyPoints()", 2e3, 438e3, 1}}, 436e3}),
      "first access from here: this caller makes no other call of tasks() in "
      "storyPoints() (p50 " +
          formatDuration(2e3) + ", slow outcome " + formatDuration(438e3) +
          "), so the new call loads the value and takes the slow outcome (+" +
          formatDuration(436e3) + " per call)");
}

}  // namespace
}  // namespace perfhat::features
