// Production values estimated from samples are marked so in hover and inlay hints; values
// recorded in full are not.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "server/features/features.h"
#include "server/features/test_snapshot.h"

namespace perfhat::features {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using namespace testing;  // NOLINT: fixture helpers

const InlayHint* hintAt(const std::vector<InlayHint>& hints, const Position& p) {
  for (const InlayHint& h : hints) {
    if (h.position == p) return &h;
  }
  return nullptr;
}

TEST(FeaturesSampled, HoverSaysEstimatedFromSamplesBesideTheCounts) {
  T4 t;
  const Position at{4, t.stories_range.start.column + 3};
  const auto full = hover(t.snapshot, at, Options());
  ASSERT_TRUE(full);
  EXPECT_THAT(full->markdown, Not(HasSubstr("estimated from samples")));

  auto& n = t.snapshot.functions[0].nodes[t.stories];
  n.sampled_calls = 1200;  // every call of the window, recorded at 25 %
  n.sampled_records = 300;
  ASSERT_TRUE(n.estimatedFromSamples());
  const auto h = hover(t.snapshot, at, Options());
  ASSERT_TRUE(h);
  EXPECT_THAT(h->markdown, HasSubstr("| calls | 1.2k (3 errors · 0.25 %) |\n"
                                     "| estimated from samples | 300 records of ≈ 1.2k calls "
                                     "(25 % recorded): counts and percentiles are estimates |"));
}

TEST(FeaturesSampled, InlayHintOfASampledMeasuredValueSaysSampled) {
  T4 t;
  auto before = inlayHints(t.snapshot, everything(), Options());
  const InlayHint* plain = hintAt(before, t.stories_range.end);
  ASSERT_NE(plain, nullptr);
  EXPECT_EQ(plain->label, "⏱ 3 ms");
  EXPECT_THAT(plain->tooltip, Not(HasSubstr("estimated from samples")));

  auto& n = t.snapshot.functions[0].nodes[t.stories];
  n.sampled_calls = 1200;
  n.sampled_records = 12;
  auto after = inlayHints(t.snapshot, everything(), Options());
  const InlayHint* h = hintAt(after, t.stories_range.end);
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(h->label, "⏱ 3 ms (sampled)");
  EXPECT_EQ(h->kind, HintKind::Measured);
  EXPECT_THAT(h->tooltip, HasSubstr("estimated from samples: 12 records of ≈ 1.2k calls (1 % "
                                    "recorded)"));
  // No measured data: the flag alone marks nothing.
  n.measured.reset();
  EXPECT_FALSE(n.estimatedFromSamples());
}

}  // namespace
}  // namespace perfhat::features
