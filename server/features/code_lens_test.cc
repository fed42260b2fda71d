#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "server/features/features.h"
#include "server/features/test_snapshot.h"

namespace perfhat::features {
namespace {

using ::testing::ElementsAre;
using namespace testing;  // NOLINT: fixture helpers

std::vector<std::string> titles(const std::vector<CodeLens>& lenses) {
  std::vector<std::string> out;
  out.reserve(lenses.size());
  for (const CodeLens& l : lenses) out.push_back(l.title);
  return out;
}

TEST(FeaturesCodeLens, ChangedFunctionShowsProductionAndPredictedDelta) {
  const T4 t;
  const std::vector<CodeLens> lenses = codeLenses(t.snapshot, Options());
  EXPECT_THAT(titles(lenses), ElementsAre("prod p50 410 ms · p99 900 ms · 1.2k calls/min",
                                          "predicted +3.72 s (+907 %)"));
  for (const CodeLens& l : lenses) {
    EXPECT_EQ(l.range, t.fn().name_range);
    EXPECT_EQ(l.command, "perfhat.showData");
    EXPECT_THAT(l.arguments, ElementsAre(t.fn().key));
  }
}

TEST(FeaturesCodeLens, UnchangedPredictedUnknownAndStale) {
  const std::string_view src = "void a() {}\nvoid b() {}\nvoid c() {}\n";
  Snapshot s;
  FunctionBuilder a("a", "a()", {{0, 0}, {0, 11}}, find(src, 0, "a"), {0, 8});
  a.total(measured(stats(100, 2e6, 3e6, 12e6)), stats(100, 2e6, 3e6, 12e6));
  FunctionBuilder b("b", "b()", {{1, 0}, {1, 11}}, find(src, 1, "b"), {1, 8});
  b.total(inferred(3.1e6, analysis::Model::Sum, analysis::fact::PartsSum{2, 3.1e6}));
  FunctionBuilder c("c", "c()", {{2, 0}, {2, 11}}, find(src, 2, "c"), {2, 8});
  s.functions = {a.build(), b.build(), c.build()};
  EXPECT_THAT(
      titles(codeLenses(s, Options())),
      ElementsAre("prod p50 2 ms · p99 12 ms · 100 calls",
                  "predicted p50 ~3.1 ms · no production data", "perfhat: no production data"));
  s.stale = true;
  Options mean;
  mean.main_statistic = "mean";
  EXPECT_EQ(codeLenses(s, mean).front().title, "prod mean 2.2 ms · p99 12 ms · 100 calls · cached");
}

TEST(FeaturesCodeLens, ExposureAndFunctionsNoVariantProbed) {
  const std::string_view src = "void a() {}\nvoid c() {}\n";
  Snapshot s;
  FunctionBuilder a("a", "a()", {{0, 0}, {0, 11}}, find(src, 0, "a"), {0, 8});
  a.total(measured(stats(100, 2e6, 3e6, 12e6)), stats(100, 2e6, 3e6, 12e6));
  FunctionBuilder c("c", "c()", {{1, 0}, {1, 11}}, find(src, 1, "c"), {1, 8});
  s.functions = {a.build(), c.build()};
  Exposure e;
  e.releases = {"r7"};
  e.replicas = 36;
  e.replicas_probed = 9;
  e.traffic_share = 0.2449;
  e.traffic_basis = "requests";
  s.functions[0].nodes[0].exposure = e;
  e.replicas_probed = 0;
  e.traffic_share = 0;
  s.functions[1].nodes[0].exposure = e;
  EXPECT_THAT(titles(codeLenses(s, Options())),
              ElementsAre("prod p50 2 ms · p99 12 ms · 100 calls · observed on 9 of 36 replicas, "
                          "24 % of traffic",
                          "perfhat: not probed in release r7: no variant of its 36 replicas "
                          "carries this probe"));
}

TEST(FeaturesCodeLens, ChangedButUnpredictableSaysQuestionMark) {
  T4 t;
  t.snapshot.functions[0].nodes[0].estimate = unknown();
  EXPECT_THAT(titles(codeLenses(t.snapshot, Options())),
              ElementsAre("prod p50 410 ms · p99 900 ms · 1.2k calls/min",
                          "predicted ? (new code without data)"));
}

TEST(FeaturesCodeLens, FasterCodeShowsANegativeDelta) {
  T4 t;
  t.snapshot.functions[0].nodes[0].estimate = inferred(205e6, analysis::Model::Sum);
  EXPECT_EQ(codeLenses(t.snapshot, Options())[1].title, "predicted -205 ms (-50 %)");
}

}  // namespace
}  // namespace perfhat::features
