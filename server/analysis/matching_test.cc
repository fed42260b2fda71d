// Specification layers over an in-memory view (no parse needed: matching works on keys).
#include "server/analysis/matching.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace perfhat::analysis {
namespace {

FeedbackItem item(const std::string& key, double mean_ns, uint64_t count = 100) {
  FeedbackItem it;
  it.key = key;
  Stats s;
  s.count = count;
  s.mean_ns = mean_ns;
  s.p50_ns = mean_ns;
  s.p90_ns = 2 * mean_ns;
  s.p99_ns = 4 * mean_ns;
  s.min_ns = mean_ns / 2;
  s.max_ns = mean_ns * 10;
  it.stats = s;
  return it;
}

TEST(MatcherTest, ExactKeyEvenWhenTheDatasetSpellsItDifferently) {
  InMemoryFeedback view({item("int agile::Svc::load(int) const", 1e6)});
  AnalysisOptions o;
  MatchResult m = Matcher(view, o).match("agile::Svc::load(int) const", "");
  ASSERT_TRUE(m);
  EXPECT_EQ(m.how, analysis::MatchKind::Exact);
}

TEST(MatcherTest, MangledName) {
  FeedbackItem it = item("legacy::load(int)", 1e6);
  it.mangled = "_Z4loadi";
  InMemoryFeedback view({it});
  AnalysisOptions o;
  MatchResult m = Matcher(view, o).match("load(int)", "_Z4loadi");
  ASSERT_TRUE(m);
  EXPECT_EQ(m.how, analysis::MatchKind::Mangled);
  EXPECT_EQ(m.item->key, "legacy::load(int)");
}

TEST(MatcherTest, UserRulesBySignatureWildcardAndRegex) {
  InMemoryFeedback view({item("GET /tasks", 3e6), item("nightly-batch", 9e9)});
  AnalysisOptions o;
  o.rules = {{"GET /tasks", "agile::Api::listTasks(...)", ""},
             {"nightly-batch", "", "batch::.*::run\\(.*"}};
  Matcher m(view, o);
  EXPECT_EQ(m.match("agile::Api::listTasks(int, bool) const", "").how, analysis::MatchKind::Rule);
  EXPECT_EQ(m.match("agile::Api::listTasks(int, bool) const", "").item->key, "GET /tasks");
  EXPECT_EQ(m.match("batch::Reports::run(int)", "").item->key, "nightly-batch");
  EXPECT_FALSE(m.match("agile::Api::other()", ""));
  // The whole key must match, as std::regex_match did.
  EXPECT_FALSE(m.match("legacy::batch::Reports::run(int)", ""));
  EXPECT_FALSE(m.match("batch::Reports::runner", ""));
  // RE2 matches in linear time without recursion: a key far too long for std::regex is matched.
  const std::string huge = "batch::" + std::string(200000, 'x') + "::run(int)";
  EXPECT_EQ(m.match(huge, "").how, analysis::MatchKind::Rule);
}

TEST(MatcherTest, NameWhenTheOverloadSetHasOneMemberElseAggregated) {
  InMemoryFeedback single({item("agile::Svc::load(long)", 2e6)});
  AnalysisOptions o;
  MatchResult m = Matcher(single, o).match("agile::Svc::load(int)", "");
  ASSERT_TRUE(m);
  EXPECT_EQ(m.how, analysis::MatchKind::Name);

  InMemoryFeedback two(
      {item("agile::Svc::load(long)", 2e6, 100), item("agile::Svc::load(double)", 6e6, 300)});
  MatchResult agg = Matcher(two, o).match("agile::Svc::load(int)", "");
  ASSERT_TRUE(agg);
  EXPECT_EQ(agg.how, analysis::MatchKind::Overloads);
  ASSERT_TRUE(agg.item->stats);
  EXPECT_EQ(agg.item->stats->count, 400u);
  EXPECT_DOUBLE_EQ(agg.item->stats->mean_ns, (100 * 2e6 + 300 * 6e6) / 400);
  EXPECT_DOUBLE_EQ(agg.item->stats->min_ns, 1e6);
  EXPECT_DOUBLE_EQ(agg.item->stats->max_ns, 6e7);

  // Template instantiations aggregate under the primary template's name.
  InMemoryFeedback inst({item("T agile::maxOf(T, T) [with T = int]", 1e3),
                         item("int agile::maxOf<long>(long, long)", 3e3)});
  EXPECT_EQ(Matcher(inst, o).match("agile::maxOf<>(T, T)", "").how, analysis::MatchKind::Overloads);
}

TEST(MatcherTest, DefinitionFileAndLine) {
  FeedbackItem probe = item("GET /x handler", 5e6);
  probe.file = "src/svc.cc";  // build-machine relative path
  probe.line = 12;            // 1-based
  FeedbackItem far = item("other", 1e6);
  far.file = "/build/src/svc.cc";
  far.line = 40;
  InMemoryFeedback view({far, probe});
  AnalysisOptions o;
  FunctionInfo fn;
  fn.key = "handle(int)";
  fn.file = "/home/me/proj/src/svc.cc";
  fn.range = {{9, 0}, {20, 1}};  // lines 10..21, 1-based
  MatchResult m = Matcher(view, o).matchDefinition(fn);
  ASSERT_TRUE(m);
  EXPECT_EQ(m.how, analysis::MatchKind::FileLine);
  EXPECT_EQ(m.item->key, "GET /x handler");
  fn.file = "/home/me/proj/src/other_svc.cc";
  EXPECT_FALSE(Matcher(view, o).matchDefinition(fn));
}

TEST(MatcherTest, NothingMatches) {
  InMemoryFeedback view({item("a()", 1)});
  AnalysisOptions o;
  MatchResult m = Matcher(view, o).match("b()", "_Z1bv");
  EXPECT_FALSE(m);
  EXPECT_EQ(m.how, analysis::MatchKind::None);
}

TEST(SameSourceFileTest, SuffixAtPathBoundary) {
  EXPECT_TRUE(sameSourceFile("/a/b/c.cc", "/a/b/c.cc"));
  EXPECT_TRUE(sameSourceFile("b/c.cc", "/home/x/b/c.cc"));
  EXPECT_FALSE(sameSourceFile("c.cc", "/home/x/bc.cc"));
  EXPECT_FALSE(sameSourceFile("", "/a.cc"));
}

}  // namespace
}  // namespace perfhat::analysis
