// A lazily loaded value read again on the same object: the second call takes the fast outcome.
// Real libclang parses, an in-memory feedback view, analyze(). Durations in nanoseconds.
#include <vector>

#include <gtest/gtest.h>

#include "server/analysis/analyze.h"
#include "server/analysis/inference.h"
#include "server/analysis/story_repo_fixture.h"
#include "server/analysis/testing/test_tu.h"

namespace perfhat::analysis {
namespace {

using testing::callSite;
using testing::findFunction;
using testing::kMs;
using testing::measured;
using testing::TestTU;

// story.tasks() in a loop header and again in its body: the second call finds the tasks loaded.
TEST(RepeatedCallTest, SecondCallOfALazilyLoadedValueOnTheSameObjectCostsTheFastOutcome) {
  TestTU t;
  t.headers = {{"repo.h", testing::kStoryRepoHeader}};
  t.code = R"src(
#include "repo.h"
int report(const std::vector<Story>& stories) {
  int n = 0;
  for (const Story& story : stories) {
    for (int id : story.tasks()) n += id;
    n += static_cast<int>(story.tasks().size());
    if (n > 3) n += static_cast<int>(story.tasks().size());
  }
  return n;
}
)src";
  // Most calls load (p50 0.4 ms); the fastest call, with the tasks loaded, took 2 µs.
  FeedbackItem tasks = measured("Story::tasks() const", 0.4 * kMs, 0.5 * kMs, 0.6 * kMs);
  tasks.stats->min_ns = 0.002 * kMs;
  tasks.callsites = {callSite("elsewhere()", 0.4 * kMs, 1)};
  InMemoryFeedback view({tasks});
  SnapshotPtr s = t.analyze(view);
  const FunctionInfo* f = findFunction(*s, "report(const std::vector<Story> &)");
  ASSERT_NE(f, nullptr);
  std::vector<const Node*> calls;
  for (const Node& n : f->nodes)
    if (n.kind == NodeKind::Call && n.call.name == "tasks") calls.push_back(&n);
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_NEAR(calls[0]->estimate.dist.mean_ns, 0.4 * kMs, 1);    // loads
  EXPECT_NEAR(calls[1]->estimate.dist.mean_ns, 0.002 * kMs, 1);  // loaded above
  EXPECT_NEAR(calls[2]->estimate.dist.mean_ns, 0.002 * kMs, 1);  // in an arm, after it
  EXPECT_EQ(calls[1]->call.receiver_var, calls[0]->call.receiver_var);
  EXPECT_FALSE(calls[1]->call.receiver_var.empty());
}

// The same, when production measured the loading call from this very caller: the site (keyed by
// caller, not by position) holds the first call's cost, and the second call still finds the
// tasks loaded.
TEST(RepeatedCallTest, ASecondCallTakesTheFastOutcomeAlsoWhenTheCallerHasASiteOfItsOwn) {
  TestTU t;
  t.headers = {{"repo.h", testing::kStoryRepoHeader}};
  t.code = R"src(
#include "repo.h"
int report(const std::vector<Story>& stories) {
  int n = 0;
  for (const Story& story : stories) {
    for (int id : story.tasks()) n += id;
    if (!story.tasks().empty()) ++n;
  }
  return n;
}
)src";
  FeedbackItem tasks = measured("Story::tasks() const", 0.4 * kMs, 0.5 * kMs, 0.6 * kMs);
  tasks.stats->min_ns = 0.002 * kMs;
  tasks.callsites = {callSite("report(const std::vector<Story> &)", 0.4 * kMs, 1)};
  InMemoryFeedback view({tasks});
  SnapshotPtr s = t.analyze(view);
  const FunctionInfo* f = findFunction(*s, "report(const std::vector<Story> &)");
  ASSERT_NE(f, nullptr);
  std::vector<const Node*> calls;
  for (const Node& n : f->nodes)
    if (n.kind == NodeKind::Call && n.call.name == "tasks") calls.push_back(&n);
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0]->estimate.derivation.model, Model::Measured);
  EXPECT_NEAR(calls[0]->estimate.dist.mean_ns, 0.4 * kMs, 1);    // the site: loads
  EXPECT_NEAR(calls[1]->estimate.dist.mean_ns, 0.002 * kMs, 1);  // loaded above
}

// The same second call, the caller measured too: its figure is the callee's loaded outcome, an
// inference, and says so (provenance and summary agree); it is not a new call either, since
// production measured it from here.
TEST(RepeatedCallTest, ARepeatedCallWithASiteOfItsOwnIsInferredAndNotNew) {
  TestTU t;
  t.headers = {{"repo.h", testing::kStoryRepoHeader}};
  t.code = R"src(
#include "repo.h"
int report(const std::vector<Story>& stories) {
  int n = 0;
  for (const Story& story : stories) {
    for (int id : story.tasks()) n += id;
    if (!story.tasks().empty()) ++n;
  }
  return n;
}
)src";
  const std::string key = "report(const std::vector<Story> &)";
  FeedbackItem tasks = measured("Story::tasks() const", 0.4 * kMs, 0.5 * kMs, 0.6 * kMs);
  tasks.stats->min_ns = 0.002 * kMs;
  tasks.callsites = {callSite(key, 0.4 * kMs, 2)};
  InMemoryFeedback view({tasks, measured(key, 1 * kMs, 1.2 * kMs, 1.5 * kMs)});
  SnapshotPtr s = t.analyze(view);
  const FunctionInfo* f = findFunction(*s, key);
  ASSERT_NE(f, nullptr);
  std::vector<const Node*> calls;
  for (const Node& n : f->nodes)
    if (n.kind == NodeKind::Call && n.call.name == "tasks") calls.push_back(&n);
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0]->estimate.provenance, Provenance::Measured);
  EXPECT_EQ(calls[1]->estimate.provenance, Provenance::Inferred);
  EXPECT_NE(calls[1]->estimate.derivation.model, Model::Measured);
  EXPECT_TRUE(std::holds_alternative<fact::RepeatedFast>(calls[1]->estimate.derivation.summary));
  for (const AddedCost& a : f->added) EXPECT_NE(a.status, AddedCost::Status::New);
  EXPECT_FALSE(f->changed);
}

// The loaded outcome below the clock's resolution: the fastest calls measured 0, and so many of
// them that the mean (0.25 ms) lies below the median (0.4 ms). The second call costs 0; with a
// mean above the median, a minimum of 0 says nothing (data without a minimum), and the second
// call keeps the full cost.
TEST(RepeatedCallTest, ZeroMinimumWithTheMeanBelowTheMedianIsTheLoadedOutcome) {
  TestTU t;
  t.headers = {{"repo.h", testing::kStoryRepoHeader}};
  t.code = R"src(
#include "repo.h"
int report(const std::vector<Story>& stories) {
  int n = 0;
  for (const Story& story : stories) {
    for (int id : story.tasks()) n += id;
    if (!story.tasks().empty()) ++n;
  }
  return n;
}
)src";
  for (const bool piled_at_zero : {true, false}) {
    SCOPED_TRACE(piled_at_zero ? "mean below the median" : "mean above the median");
    FeedbackItem tasks = measured("Story::tasks() const", 0.4 * kMs, 0.47 * kMs, 4 * kMs);
    tasks.stats->min_ns = 0;
    tasks.stats->mean_ns = piled_at_zero ? 0.25 * kMs : 0.45 * kMs;
    tasks.callsites = {callSite("elsewhere()", 0.4 * kMs, 1)};
    InMemoryFeedback view({tasks});
    SnapshotPtr s = t.analyze(view);
    const FunctionInfo* f = findFunction(*s, "report(const std::vector<Story> &)");
    ASSERT_NE(f, nullptr);
    std::vector<const Node*> calls;
    for (const Node& n : f->nodes)
      if (n.kind == NodeKind::Call && n.call.name == "tasks") calls.push_back(&n);
    ASSERT_EQ(calls.size(), 2u);
    EXPECT_GT(calls[0]->estimate.dist.mean_ns, 0.2 * kMs);  // loads
    if (piled_at_zero)
      EXPECT_EQ(calls[1]->estimate.dist.mean_ns, 0);  // loaded above
    else
      EXPECT_GT(calls[1]->estimate.dist.mean_ns, 0.2 * kMs);
  }
}

// The same callee on another object, or one without two outcomes, is costed in full.
TEST(RepeatedCallTest, OtherObjectsAndSingleOutcomeCalleesKeepTheirCost) {
  TestTU t;
  t.headers = {{"repo.h", testing::kStoryRepoHeader}};
  t.code = R"src(
#include "repo.h"
int report(const Story& a, const Story& b) {
  const Story& x = a;
  const Story& y = b;
  return static_cast<int>(x.tasks().size() + y.tasks().size()) + x.points() + x.points();
}
)src";
  FeedbackItem tasks = measured("Story::tasks() const", 0.4 * kMs, 0.5 * kMs, 0.6 * kMs);
  tasks.stats->min_ns = 0.002 * kMs;
  tasks.callsites = {callSite("elsewhere()", 0.4 * kMs, 1)};
  FeedbackItem points = measured("Story::points() const", 1 * kMs, 1.2 * kMs, 1.5 * kMs);
  points.stats->min_ns = 0.8 * kMs;
  points.callsites = {callSite("elsewhere()", 1 * kMs, 1)};
  InMemoryFeedback view({tasks, points});
  SnapshotPtr s = t.analyze(view);
  const FunctionInfo* f = findFunction(*s, "report(const Story &, const Story &)");
  ASSERT_NE(f, nullptr);
  for (const Node& n : f->nodes) {
    if (n.kind != NodeKind::Call) continue;
    if (n.call.name == "tasks") {
      EXPECT_NEAR(n.estimate.dist.mean_ns, 0.4 * kMs, 1);
    }
    if (n.call.name == "points") {
      EXPECT_NEAR(n.estimate.dist.mean_ns, 1 * kMs, 1);
    }
  }
}

}  // namespace
}  // namespace perfhat::analysis
