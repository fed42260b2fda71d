// Iteration counts from data flow (issue #17): a loop over a local container the function fills
// runs once per insertion, bounded by what fills it.
#include <gtest/gtest.h>

#include "common/test_units.h"
#include "server/analysis/analyze.h"
#include "server/analysis/task_repo_fixture.h"
#include "server/analysis/testing/test_tu.h"

namespace perfhat::analysis {
namespace {

using testing::callSite;
using testing::findFunction;
using testing::kTaskRepoHeader;
using testing::measuredMean;
using testing::TestTU;

using perfhat::test_units::kMs;

// A new remote call per element of a set the function fills from a measured collection: the
// count is the insertions, not the default.
TEST(DataFlowIterationsTest, LoopOverALocalContainerIsBoundedByItsInsertions) {
  TestTU t;
  t.headers = {{"repo.h", kTaskRepoHeader}};
  t.code = R"src(
#include <set>
#include "repo.h"
int owners(const Repo& r, int story) {
  std::set<int> ids;
  for (const Task& t : r.tasks(story)) ids.insert(r.owner(t.id));
  int sum = 0;
  for (int id : ids) sum += r.lookup(id);
  return sum;
}
)src";
  FeedbackItem tasks = measuredMean("Repo::tasks(int) const", 1 * kMs);
  tasks.result_size = SizeStats{45, 60};
  InMemoryFeedback view({tasks, measuredMean("Repo::owner(int) const", 0.1 * kMs),
                         measuredMean("Repo::lookup(int) const", 1 * kMs)});
  SnapshotPtr s = t.analyze(view);
  const FunctionInfo* f = findFunction(*s, "owners(const Repo &, int)");
  ASSERT_NE(f, nullptr);
  std::vector<const Node*> loops = testing::nodesOfKind(*f, NodeKind::Loop);
  ASSERT_EQ(loops.size(), 2u);
  EXPECT_EQ(loops[0]->loop.iteration_source, IterationSource::ProducerSize);
  EXPECT_EQ(loops[1]->loop.iteration_source, IterationSource::DataFlow);
  ASSERT_TRUE(loops[1]->loop.iterations);
  EXPECT_DOUBLE_EQ(*loops[1]->loop.iterations, 45);
  EXPECT_EQ(loops[1]->loop.range_var_name, "ids");
  ASSERT_EQ(loops[1]->loop.fill_sites.size(), 1u);
}

// Insertions behind a branch fill the container on the branch's share of the iterations only:
// by production's share where the arm begins with a call measured from here (owner() on 9 of
// the 45 tasks), else by the condition's static prior.
TEST(DataFlowIterationsTest, InsertionsBehindABranchCountOnTheBranchsShare) {
  TestTU t;
  t.headers = {{"repo.h", kTaskRepoHeader}};
  t.code = R"src(
#include <vector>
#include "repo.h"
int guessed(const Repo& r, int story) {
  std::vector<int> ids;
  for (const Task& t : r.tasks(story)) {
    if (t.id == 0) ids.push_back(t.id);
  }
  int sum = 0;
  for (int id : ids) sum += r.lookup(id);
  return sum;
}
int shown(const Repo& r, int story) {
  std::vector<int> ids;
  for (const Task& t : r.tasks(story)) {
    if (t.id == 0) {
      r.owner(t.id);
      ids.push_back(t.id);
    }
  }
  int sum = 0;
  for (int id : ids) sum += r.lookup(id);
  return sum;
}
)src";
  FeedbackItem tasks = measuredMean("Repo::tasks(int) const", 1 * kMs);
  tasks.result_size = SizeStats{45, 60};
  FeedbackItem owner = measuredMean("Repo::owner(int) const", 0.1 * kMs);
  owner.callsites = {callSite("shown(const Repo &, int)", 0.1 * kMs, 9)};
  InMemoryFeedback view({tasks, owner, measuredMean("Repo::lookup(int) const", 1 * kMs),
                         measuredMean("guessed(const Repo &, int)", 10 * kMs),
                         measuredMean("shown(const Repo &, int)", 10 * kMs)});
  SnapshotPtr s = t.analyze(view);
  for (const char* name : {"guessed(const Repo &, int)", "shown(const Repo &, int)"}) {
    SCOPED_TRACE(name);
    const FunctionInfo* f = findFunction(*s, name);
    ASSERT_NE(f, nullptr);
    std::vector<const Node*> loops = testing::nodesOfKind(*f, NodeKind::Loop);
    std::vector<const Node*> branches = testing::nodesOfKind(*f, NodeKind::Branch);
    ASSERT_EQ(loops.size(), 2u);
    ASSERT_EQ(branches.size(), 1u);
    EXPECT_EQ(loops[1]->loop.iteration_source, IterationSource::DataFlow);
    ASSERT_TRUE(loops[1]->loop.iterations);
    if (std::string(name) == "shown(const Repo &, int)") {
      EXPECT_TRUE(branches[0]->branch.measured);
      EXPECT_NEAR(*loops[1]->loop.iterations, 9, 1e-9);
    } else {
      ASSERT_TRUE(branches[0]->branch.prior);
      EXPECT_LT(*branches[0]->branch.prior, 0.5);
      EXPECT_NEAR(*loops[1]->loop.iterations, 45 * *branches[0]->branch.prior, 1e-9);
    }
  }
}

// `m[key]` on a map inserts the key when it is missing: it fills the map as insert() does, so a
// loop over the map is bounded by those insertions, not the default count. A vector's `v[i]`
// inserts nothing.
TEST(DataFlowIterationsTest, AMapsSubscriptIsAnInsertion) {
  TestTU t;
  t.headers = {{"repo.h", kTaskRepoHeader}};
  t.code = R"src(
#include <map>
#include <vector>
#include "repo.h"
int perOwner(const Repo& r, int story) {
  std::map<int, int> hours;
  std::vector<int> seen(1);
  for (const Task& t : r.tasks(story)) {
    hours[t.id] += 1;
    seen[0] += t.id;
  }
  int sum = 0;
  for (const auto& [owner, n] : hours) sum += r.lookup(owner) * n;
  for (int s : seen) sum += r.lookup(s);
  return sum;
}
)src";
  FeedbackItem tasks = measuredMean("Repo::tasks(int) const", 1 * kMs);
  tasks.result_size = SizeStats{45, 60};
  InMemoryFeedback view({tasks, measuredMean("Repo::lookup(int) const", 1 * kMs)});
  SnapshotPtr s = t.analyze(view);
  const FunctionInfo* f = findFunction(*s, "perOwner(const Repo &, int)");
  ASSERT_NE(f, nullptr);
  std::vector<const Node*> loops = testing::nodesOfKind(*f, NodeKind::Loop);
  ASSERT_EQ(loops.size(), 3u);
  EXPECT_EQ(loops[1]->loop.range_var_name, "hours");
  EXPECT_EQ(loops[1]->loop.iteration_source, IterationSource::DataFlow);
  ASSERT_TRUE(loops[1]->loop.iterations);
  EXPECT_DOUBLE_EQ(*loops[1]->loop.iterations, 45);
  EXPECT_EQ(loops[2]->loop.range_var_name, "seen");
  EXPECT_EQ(loops[2]->loop.iteration_source, IterationSource::Default);
}

// `m[k]` bounds a later loop over m only where the function starts m empty: a static local keeps
// what earlier calls inserted, a reference names a map filled elsewhere, and a copy starts with
// what it copied, so each holds more than this call's insertions (the default count stays).
TEST(DataFlowIterationsTest, AMapsSubscriptBoundsOnlyAMapTheFunctionStartsEmpty) {
  TestTU t;
  t.headers = {{"repo.h", kTaskRepoHeader}};
  t.code = R"src(
#include <map>
#include "repo.h"
std::map<int, int> g_cache;
int kept(const Repo& r, int story, const std::map<int, int>& base) {
  static std::map<int, int> seen;
  auto& cache = g_cache;
  std::map<int, int> copy = base;
  std::map<int, int> fresh{};
  for (const Task& t : r.tasks(story)) {
    seen[t.id] += 1;
    cache[t.id] += 1;
    copy[t.id] += 1;
    fresh[t.id] += 1;
  }
  int sum = 0;
  for (const auto& [k, n] : seen) sum += r.lookup(k) * n;
  for (const auto& [k, n] : cache) sum += r.lookup(k) * n;
  for (const auto& [k, n] : copy) sum += r.lookup(k) * n;
  for (const auto& [k, n] : fresh) sum += r.lookup(k) * n;
  return sum;
}
)src";
  FeedbackItem tasks = measuredMean("Repo::tasks(int) const", 1 * kMs);
  tasks.result_size = SizeStats{45, 60};
  InMemoryFeedback view({tasks, measuredMean("Repo::lookup(int) const", 1 * kMs)});
  SnapshotPtr s = t.analyze(view);
  const FunctionInfo* f = findFunction(*s, "kept(const Repo &, int, const std::map<int, int> &)");
  ASSERT_NE(f, nullptr);
  std::vector<const Node*> loops = testing::nodesOfKind(*f, NodeKind::Loop);
  ASSERT_EQ(loops.size(), 5u);
  for (int i : {1, 2, 3}) {
    SCOPED_TRACE(loops[i]->loop.range_var_name);
    EXPECT_EQ(loops[i]->loop.iteration_source, IterationSource::Default);
  }
  EXPECT_EQ(loops[4]->loop.range_var_name, "fresh");
  EXPECT_EQ(loops[4]->loop.iteration_source, IterationSource::DataFlow);
}

TEST(DataFlowIterationsTest, RangeOverALocalInitializedFromACallUsesThatProducer) {
  TestTU t;
  t.headers = {{"repo.h", kTaskRepoHeader}};
  t.code = R"src(
#include "repo.h"
int sum(const Repo& r, int story) {
  const auto tasks = r.tasks(story);
  int s = 0;
  for (const Task& t : tasks) s += r.effort(t.id);
  return s;
}
)src";
  FeedbackItem tasks = measuredMean("Repo::tasks(int) const", 1 * kMs);
  tasks.result_size = SizeStats{12, 20};
  InMemoryFeedback view({tasks, measuredMean("Repo::effort(int) const", 1 * kMs)});
  SnapshotPtr s = t.analyze(view);
  const FunctionInfo* f = findFunction(*s, "sum(const Repo &, int)");
  ASSERT_NE(f, nullptr);
  std::vector<const Node*> loops = testing::nodesOfKind(*f, NodeKind::Loop);
  ASSERT_EQ(loops.size(), 1u);
  EXPECT_EQ(loops[0]->loop.iteration_source, IterationSource::ProducerSize);
  EXPECT_DOUBLE_EQ(*loops[0]->loop.iterations, 12);
}

}  // namespace
}  // namespace perfhat::analysis
