// The derivation's words: the same duration formatter as every other figure of the hover.
#include "server/features/derivation_text.h"

#include <gtest/gtest.h>

#include "server/features/features.h"
#include "server/features/names.h"

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
                 fact::PartCost{analysis::NodeKind::Call, {"load", ""}, 3, 2e6}};
  EXPECT_EQ(inputText(in), "per iteration: arm 1: load(): 2 ms");
  EXPECT_EQ(
      inputText({{}, fact::ChangedCall{fact::CallChange::Removed, {"old", ""}, {10, 0.5}, 2e6}}),
      "removed call old(): −10 × 0.5 × 2 ms");
  // A call the walk found no name for is named by its key.
  EXPECT_EQ(summaryText(fact::NoData{{"", "svc::f(int)"}}), "no production data for svc::f(int)");
}

TEST(FeaturesDerivationText, AssumptionsCarryTheirNumbers) {
  EXPECT_EQ(assumptionText(fact::DefaultIterations{10}),
            "default 10 iterations: no loop data, producer size, trip count or annotation");
  EXPECT_EQ(assumptionText(fact::UnknownParts{{{"g", ""}, {}}}),
            "2 part(s) without data not counted: g(), a nested block");
  EXPECT_EQ(assumptionText(fact::WeakFit{0.75}),
            "weak fit: shrunk toward the call sites' mean latency by 0.25 (adjusted R² 0.75)");
  EXPECT_EQ(assumptionText(fact::FirstAccessHere{
                {{{"tasks", ""}, {"storyPoints", ""}, 2e3, 438e3, 1}}, 436e3}),
            "first access from here: this caller makes no other call of tasks() in "
            "storyPoints() (p50 " +
                formatDuration(2e3) + ", slow outcome " + formatDuration(438e3) +
                "), so the new call loads the value and takes the slow outcome (+" +
                formatDuration(436e3) + " per call)");
}

// The walk keeps which heuristics gave a branch its prior; the words are said here only.
TEST(FeaturesDerivationText, StaticPriorsNameTheirHeuristics) {
  using analysis::BranchHeuristic;
  using analysis::BranchPrior;
  const BranchPrior combined{
      BranchPrior::ShortCircuit::None,
      {{BranchHeuristic::PointerNonNull, true}, {BranchHeuristic::ReturnEarly, false, true}}};
  EXPECT_EQ(assumptionText(fact::StaticPrior{combined, 0.25, 0.75}),
            "no branch data: static prior (negated pointer heuristic: non-null + return "
            "heuristic: an arm that returns early, 28 % (the else arm)): taken p = 0.25, not "
            "taken p = 0.75");
  EXPECT_EQ(branchPriorText({BranchPrior::ShortCircuit::Or, {}}),
            "short circuit: the right operand of || runs when the left fails (no heuristic for "
            "the left: even odds)");
  EXPECT_EQ(branchPriorText({BranchPrior::ShortCircuit::And, {{BranchHeuristic::OpcodeEqual}}}),
            "short circuit: the right operand of && runs when the left holds (opcode heuristic: "
            "x == C unlikely)");
}

TEST(FeaturesDerivationText, TripCountSourcesReadAsWritten) {
  using analysis::TripCountSource;
  const std::vector<std::string> size_of = {"sizeof", "(", "a", ")", "/", "sizeof",
                                            "(",      "a", "[", "0", "]", ")"};
  EXPECT_EQ(tripCountSourceText({{{{"kStart"}, 2}, {size_of, 8}}, {}}),
            "kStart = 2, sizeof(a) / sizeof(a[0]) = 8");
  EXPECT_EQ(tripCountSourceText(
                {{{{"std", "::", "size", "(", "f", "(", "a", ",", "b", ")", ")"}, 3}}, {}}),
            "std::size(f(a, b)) = 3");
  // The analysis keeps an expression whole; the hover cuts it once past 80 characters.
  std::vector<std::string> sum = {"kAlpha"};
  for (int i = 1; i < 20; ++i) sum.insert(sum.end(), {"+", "kAlpha"});
  std::string ten = "kAlpha";
  for (int i = 1; i < 10; ++i) ten += " + kAlpha";
  EXPECT_EQ(tripCountSourceText({{{sum, 20}}, {}}), ten + " … = 20");
  EXPECT_EQ(tripCountSourceText({{}, TripCountSource::FixedArray{"int[8]", 8}}),
            "range over int[8]: 8 elements");
  EXPECT_EQ(tripCountSourceText({}), "");
}

}  // namespace
}  // namespace perfhat::features
