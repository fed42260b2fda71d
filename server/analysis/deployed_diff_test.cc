// Diff-aware prediction (DESIGN §10, "What production ran"): the code as written against the
// body production ran, both parsed by libclang; measured − removed + added, node by node.
#include <gtest/gtest.h>

#include "server/analysis/analyze.h"
#include "server/analysis/inference.h"
#include "server/analysis/testing/test_tu.h"

namespace perfhat::analysis {
namespace {

using testing::callSite;

using testing::findFunction;
using testing::TestTU;

constexpr double kMs = 1e6;

const char* kHeader = R"src(
#include <vector>
struct Task { int id; };
struct Repo {
  std::vector<Task> tasks(int story) const;
  int effort(int task) const;
  int owner(int task) const;
  int lookup(int user) const;
};
)src";

FeedbackItem measured(const std::string& key, double mean_ns, uint64_t count = 100) {
  return testing::measuredItem(key, mean_ns, 1.2 * mean_ns, 1.5 * mean_ns, count);
}

struct Both {
  std::unique_ptr<TestTU::Built> now, deployed;
  SnapshotPtr snap;
};

Both analyseAgainst(const std::string& deployed_code, const std::string& code,
                    const FeedbackView& view) {
  TestTU was, is;
  was.code = deployed_code;
  is.code = code;
  was.headers = is.headers = {{"repo.h", kHeader}};
  Both b;
  b.deployed = was.build();
  b.now = is.build();
  b.snap = analyze(b.now->unit, view, is.options, 0, DeployedUnit{&b.deployed->unit, "abc1234"});
  return b;
}

const std::string kFn = "total(const Repo &, int)";

// Production: total() 25 ms, of which 45 effort() calls of 0.5 ms in the loop (an N+1).
InMemoryFeedback nPlusOneData() {
  FeedbackItem tasks = measured("Repo::tasks(int) const", 1 * kMs);
  tasks.callsites = {callSite(kFn, 1 * kMs, 1)};
  tasks.result_size = SizeStats{45, 60};
  FeedbackItem effort = measured("Repo::effort(int) const", 0.5 * kMs);
  effort.callsites = {callSite(kFn, 0.5 * kMs, 45)};
  FeedbackItem total = measured(kFn, 25 * kMs);
  total.versions = {"abc1234"};
  return InMemoryFeedback({tasks, effort, total});
}

const char* kDeployed = R"src(
#include "repo.h"
int total(const Repo& r, int story) {
  int sum = 0;
  for (const Task& t : r.tasks(story)) sum += r.effort(t.id);
  return sum;
}
)src";

TEST(DeployedDiffTest, IdenticalBodyIsMeasuredAsIsWhateverCallSiteDataLacks) {
  // owner() has no call-site data from total(): without the deployed body it could be new.
  const char* code = R"src(
#include "repo.h"
int total(const Repo& r, int story) {
  int sum = 0;
  for (const Task& t : r.tasks(story)) sum += r.effort(t.id) + r.owner(t.id);
  return sum;
}
)src";
  InMemoryFeedback view = nPlusOneData();
  FeedbackItem owner = measured("Repo::owner(int) const", 3 * kMs);
  owner.callsites = {callSite("other()", 3 * kMs, 1)};
  view.add(owner);
  Both b = analyseAgainst(code, code, view);
  const FunctionInfo* f = findFunction(*b.snap, kFn);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->deployed, DeployedBody::Identical);
  EXPECT_TRUE(f->added.empty());
  EXPECT_FALSE(f->changed);
  EXPECT_EQ(f->root().estimate.provenance, Provenance::Measured);
  EXPECT_DOUBLE_EQ(f->root().estimate.dist.mean_ns, 25 * kMs);
}

TEST(DeployedDiffTest, LayoutAndCommentsDoNotMakeABodyChanged) {
  const char* code = R"src(
#include "repo.h"
// the sum of the efforts
int total(const Repo& r,
          int story) {
  int sum = 0;  // running total
  for (const Task& t : r.tasks(story))
    sum += r.effort(t.id);
  return sum;
}
)src";
  Both b = analyseAgainst(kDeployed, code, nPlusOneData());
  EXPECT_EQ(findFunction(*b.snap, kFn)->deployed, DeployedBody::Identical);
}

TEST(DeployedDiffTest, RemovedCallInALoopIsSubtractedWithProductionsCount) {
  const char* fixed = R"src(
#include "repo.h"
int total(const Repo& r, int story) {
  int sum = 0;
  for (const Task& t : r.tasks(story)) sum += t.id;
  return sum;
}
)src";
  Both b = analyseAgainst(kDeployed, fixed, nPlusOneData());
  const FunctionInfo* f = findFunction(*b.snap, kFn);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->deployed, DeployedBody::Changed);
  ASSERT_EQ(f->added.size(), 1u);
  const AddedCost& gone = f->added[0];
  EXPECT_EQ(gone.status, AddedCost::Status::Removed);
  EXPECT_EQ(gone.removed_name, "effort()");
  EXPECT_DOUBLE_EQ(gone.executions, 45);
  EXPECT_NEAR(gone.total.mean_ns, 22.5 * kMs, 1);
  EXPECT_NEAR(f->root().estimate.dist.mean_ns, 2.5 * kMs, 1);  // 25 − 45 × 0.5
  EXPECT_TRUE(f->changed);
}

// A `continue` put in front of a kept call (c85): production counted the call on every
// iteration, where it stood; behind the new guard it runs on the share that passes it (no
// heuristic for `t.id < 2`: even arms), so half the calls go.
TEST(DeployedDiffTest, ACallBehindANewContinueGuardRunsOnTheShareThatPassesIt) {
  const char* guarded = R"src(
#include "repo.h"
int total(const Repo& r, int story) {
  int sum = 0;
  for (const Task& t : r.tasks(story)) {
    if (t.id < 2) continue;
    sum += r.effort(t.id);
  }
  return sum;
}
)src";
  Both b = analyseAgainst(kDeployed, guarded, nPlusOneData());
  const FunctionInfo* f = findFunction(*b.snap, kFn);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->deployed, DeployedBody::Changed);
  // 25 − 45 × 0.5 (where it stood) + 45 × 0.5 × 0.5 (behind the guard).
  EXPECT_NEAR(f->root().estimate.dist.mean_ns, 13.75 * kMs, 1);
}

// The loop rewritten as std::accumulate with a lambda (c89): the algorithm calls the lambda per
// element of the same collection, so the lambda's effort() is the loop's, kept, not removed.
TEST(DeployedDiffTest, ALoopRewrittenAsAnAlgorithmWithALambdaIsTheSameLoop) {
  const char* accumulated = R"src(
#include <numeric>
#include "repo.h"
int total(const Repo& r, int story) {
  const auto tasks = r.tasks(story);
  return std::accumulate(tasks.begin(), tasks.end(), 0,
                         [&r](int sum, const Task& t) { return sum + r.effort(t.id); });
}
)src";
  Both b = analyseAgainst(kDeployed, accumulated, nPlusOneData());
  const FunctionInfo* f = findFunction(*b.snap, kFn);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->deployed, DeployedBody::Changed);
  for (const AddedCost& a : f->added) EXPECT_NE(a.removed_name, "effort()");
  EXPECT_NEAR(f->root().estimate.dist.mean_ns, 25 * kMs, 0.01 * kMs);
}

// A new algorithm call whose lambda makes a call: per element of its range (the producer's 45).
TEST(DeployedDiffTest, ACallInANewAlgorithmsLambdaRunsPerElement) {
  const char* counted = R"src(
#include <algorithm>
#include "repo.h"
int total(const Repo& r, int story) {
  int sum = 0;
  for (const Task& t : r.tasks(story)) sum += r.effort(t.id);
  const auto tasks = r.tasks(story);
  return sum + int(std::count_if(tasks.begin(), tasks.end(),
                                 [&r](const Task& t) { return r.owner(t.id) == 0; }));
}
)src";
  InMemoryFeedback view = nPlusOneData();
  FeedbackItem owner = measured("Repo::owner(int) const", 0.1 * kMs);
  owner.callsites = {callSite("other()", 0.1 * kMs, 1)};
  view.add(owner);
  Both b = analyseAgainst(kDeployed, counted, view);
  const FunctionInfo* f = findFunction(*b.snap, kFn);
  ASSERT_NE(f, nullptr);
  const AddedCost* owners = nullptr;
  for (const AddedCost& a : f->added)
    if (a.status == AddedCost::Status::New && f->nodes[a.node].callee_name == "owner") owners = &a;
  ASSERT_NE(owners, nullptr);
  EXPECT_NEAR(owners->executions, 45, 1e-6);
}

// Production records a call inside an algorithm's lambda under the lambda: with f's own call of
// the same callee, and without any site from f, unchanged code adds nothing to f's measurement.
TEST(DeployedDiffTest, CallsInAnAlgorithmsLambdaAreNotNewOrExtraCallsOfTheFunction) {
  TestTU t;
  t.code = R"src(
#include <algorithm>
#include "repo.h"
int total(const Repo& r, int story) {
  const auto tasks = r.tasks(story);
  int sum = r.effort(story);
  std::for_each(tasks.begin(), tasks.end(),
                [&](const Task& x) { sum += r.effort(x.id) + r.owner(x.id); });
  return sum;
}
)src";
  t.headers = {{"repo.h", kHeader}};
  const std::string lambda = kFn + "::lambda#1";
  FeedbackItem tasks = measured("Repo::tasks(int) const", 1 * kMs);
  tasks.callsites = {callSite(kFn, 1 * kMs, 1)};
  tasks.result_size = SizeStats{45, 60};
  FeedbackItem effort = measured("Repo::effort(int) const", 0.5 * kMs);
  effort.callsites = {callSite(kFn, 0.5 * kMs, 1), callSite(lambda, 0.5 * kMs, 1)};
  FeedbackItem owner = measured("Repo::owner(int) const", 0.1 * kMs);
  owner.callsites = {callSite(lambda, 0.1 * kMs, 1)};
  FeedbackItem total = measured(kFn, 30 * kMs);
  InMemoryFeedback view({tasks, effort, owner, total});
  auto b = t.build();
  SnapshotPtr snap = analyze(b->unit, view, t.options, 0);
  const FunctionInfo* f = findFunction(*snap, kFn);
  ASSERT_NE(f, nullptr);
  int in_lambda = 0;
  for (const Node& n : f->nodes) in_lambda += n.kind == NodeKind::Call && n.via_lambda;
  EXPECT_EQ(in_lambda, 2);  // the calls are still modelled in f, per element
  EXPECT_TRUE(f->added.empty()) << f->added.size() << " added, first on "
                                << f->nodes[f->added.front().node].callee_name;
}

// Two locals holding results of the same producer are two collections: a call moved from the
// loop over one to the loop over the other moves (one gone, one new), it is not kept.
TEST(DeployedDiffTest, CallMovedBetweenLoopsOverTwoResultsOfOneProducerIsNotKept) {
  const char* before = R"src(
#include "repo.h"
int total(const Repo& r, int story) {
  int sum = 0;
  const auto xs = r.tasks(story);
  const auto ys = r.tasks(story + 1);
  for (const Task& x : xs) sum += r.effort(x.id);
  for (const Task& y : ys) sum += y.id;
  return sum;
}
)src";
  const char* after = R"src(
#include "repo.h"
int total(const Repo& r, int story) {
  int sum = 0;
  const auto xs = r.tasks(story);
  const auto ys = r.tasks(story + 1);
  for (const Task& x : xs) sum += x.id;
  for (const Task& y : ys) sum += r.effort(y.id);
  return sum;
}
)src";
  FeedbackItem tasks = measured("Repo::tasks(int) const", 1 * kMs);
  tasks.callsites = {callSite(kFn, 1 * kMs, 2)};
  tasks.result_size = SizeStats{45, 60};
  FeedbackItem effort = measured("Repo::effort(int) const", 0.5 * kMs);
  effort.callsites = {callSite(kFn, 0.5 * kMs, 45)};
  FeedbackItem total = measured(kFn, 25 * kMs);
  InMemoryFeedback view({tasks, effort, total});
  Both b = analyseAgainst(before, after, view);
  const FunctionInfo* f = findFunction(*b.snap, kFn);
  ASSERT_NE(f, nullptr);
  int removed = 0, added = 0;
  for (const AddedCost& a : f->added) ++(a.status == AddedCost::Status::Removed ? removed : added);
  EXPECT_EQ(removed, 1);
  EXPECT_EQ(added, 1);
}

TEST(DeployedDiffTest, CallMovedIntoALoopIsOneGoneAndOneNew) {
  const char* before = R"src(
#include "repo.h"
int total(const Repo& r, int story) {
  int sum = r.effort(story);
  for (const Task& t : r.tasks(story)) sum += t.id;
  return sum;
}
)src";
  const char* after = R"src(
#include "repo.h"
int total(const Repo& r, int story) {
  int sum = 0;
  for (const Task& t : r.tasks(story)) sum += t.id + r.effort(story);
  return sum;
}
)src";
  FeedbackItem tasks = measured("Repo::tasks(int) const", 1 * kMs);
  tasks.callsites = {callSite(kFn, 1 * kMs, 1)};
  tasks.result_size = SizeStats{45, 60};
  FeedbackItem effort = measured("Repo::effort(int) const", 0.5 * kMs);
  effort.callsites = {callSite(kFn, 0.5 * kMs, 1)};
  FeedbackItem total = measured(kFn, 3 * kMs);
  InMemoryFeedback view({tasks, effort, total});
  Both b = analyseAgainst(before, after, view);
  const FunctionInfo* f = findFunction(*b.snap, kFn);
  ASSERT_NE(f, nullptr);
  double added = 0, removed = 0;
  for (const AddedCost& a : f->added)
    (a.status == AddedCost::Status::Removed ? removed : added) += a.total.mean_ns;
  EXPECT_NEAR(removed, 0.5 * kMs, 1);
  EXPECT_NEAR(added, 45 * 0.5 * kMs, 1);  // the producer's recorded size
  EXPECT_NEAR(f->root().estimate.dist.mean_ns, (3 - 0.5 + 22.5) * kMs, 1);
}

TEST(DeployedDiffTest, ReplacedCallSubtractsTheOldAndAddsTheNew) {
  const char* after = R"src(
#include "repo.h"
int total(const Repo& r, int story) {
  int sum = 0;
  for (const Task& t : r.tasks(story)) sum += r.owner(t.id);
  return sum;
}
)src";
  InMemoryFeedback view = nPlusOneData();
  FeedbackItem owner = measured("Repo::owner(int) const", 0.1 * kMs);
  owner.callsites = {callSite("other()", 0.1 * kMs, 1)};
  view.add(owner);
  Both b = analyseAgainst(kDeployed, after, view);
  const FunctionInfo* f = findFunction(*b.snap, kFn);
  ASSERT_NE(f, nullptr);
  // 25 − 45 × 0.5 + 45 × 0.1: the replaced call's cost is not kept.
  EXPECT_NEAR(f->root().estimate.dist.mean_ns, (25 - 22.5 + 4.5) * kMs, 1e3);
}

TEST(DeployedDiffTest, FunctionMissingFromTheDeployedTextIsAbsent) {
  const char* after = R"src(
#include "repo.h"
int total(const Repo& r, int story) {
  int sum = 0;
  for (const Task& t : r.tasks(story)) sum += r.effort(t.id);
  return sum;
}
int fresh(const Repo& r) { return r.effort(1); }
)src";
  Both b = analyseAgainst(kDeployed, after, nPlusOneData());
  EXPECT_EQ(findFunction(*b.snap, "fresh(const Repo &)")->deployed, DeployedBody::Absent);
  EXPECT_EQ(findFunction(*b.snap, kFn)->deployed, DeployedBody::Identical);
}

// A new remote call per element of a set the function fills from a measured collection: the
// count is the insertions, not the default.
TEST(DataFlowIterationsTest, LoopOverALocalContainerIsBoundedByItsInsertions) {
  TestTU t;
  t.headers = {{"repo.h", kHeader}};
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
  FeedbackItem tasks = measured("Repo::tasks(int) const", 1 * kMs);
  tasks.result_size = SizeStats{45, 60};
  InMemoryFeedback view({tasks, measured("Repo::owner(int) const", 0.1 * kMs),
                         measured("Repo::lookup(int) const", 1 * kMs)});
  SnapshotPtr s = t.analyze(view);
  const FunctionInfo* f = findFunction(*s, "owners(const Repo &, int)");
  ASSERT_NE(f, nullptr);
  std::vector<const Node*> loops = testing::nodesOfKind(*f, NodeKind::Loop);
  ASSERT_EQ(loops.size(), 2u);
  EXPECT_EQ(loops[0]->iteration_source, IterationSource::ProducerSize);
  EXPECT_EQ(loops[1]->iteration_source, IterationSource::DataFlow);
  ASSERT_TRUE(loops[1]->iterations);
  EXPECT_DOUBLE_EQ(*loops[1]->iterations, 45);
  EXPECT_EQ(loops[1]->range_var_name, "ids");
  ASSERT_EQ(loops[1]->fill_sites.size(), 1u);
}

// Insertions behind a branch fill the container on the branch's share of the iterations only:
// by production's share where the arm begins with a call measured from here (owner() on 9 of
// the 45 tasks), else by the condition's static prior.
TEST(DataFlowIterationsTest, InsertionsBehindABranchCountOnTheBranchsShare) {
  TestTU t;
  t.headers = {{"repo.h", kHeader}};
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
  FeedbackItem tasks = measured("Repo::tasks(int) const", 1 * kMs);
  tasks.result_size = SizeStats{45, 60};
  FeedbackItem owner = measured("Repo::owner(int) const", 0.1 * kMs);
  owner.callsites = {callSite("shown(const Repo &, int)", 0.1 * kMs, 9)};
  InMemoryFeedback view({tasks, owner, measured("Repo::lookup(int) const", 1 * kMs),
                         measured("guessed(const Repo &, int)", 10 * kMs),
                         measured("shown(const Repo &, int)", 10 * kMs)});
  SnapshotPtr s = t.analyze(view);
  for (const char* name : {"guessed(const Repo &, int)", "shown(const Repo &, int)"}) {
    SCOPED_TRACE(name);
    const FunctionInfo* f = findFunction(*s, name);
    ASSERT_NE(f, nullptr);
    std::vector<const Node*> loops = testing::nodesOfKind(*f, NodeKind::Loop);
    std::vector<const Node*> branches = testing::nodesOfKind(*f, NodeKind::Branch);
    ASSERT_EQ(loops.size(), 2u);
    ASSERT_EQ(branches.size(), 1u);
    EXPECT_EQ(loops[1]->iteration_source, IterationSource::DataFlow);
    ASSERT_TRUE(loops[1]->iterations);
    if (std::string(name) == "shown(const Repo &, int)") {
      EXPECT_TRUE(branches[0]->branch_measured);
      EXPECT_NEAR(*loops[1]->iterations, 9, 1e-9);
    } else {
      ASSERT_TRUE(branches[0]->branch_prior);
      EXPECT_LT(*branches[0]->branch_prior, 0.5);
      EXPECT_NEAR(*loops[1]->iterations, 45 * *branches[0]->branch_prior, 1e-9);
    }
  }
}

// `m[key]` on a map inserts the key when it is missing: it fills the map as insert() does, so a
// loop over the map is bounded by those insertions, not the default count. A vector's `v[i]`
// inserts nothing.
TEST(DataFlowIterationsTest, AMapsSubscriptIsAnInsertion) {
  TestTU t;
  t.headers = {{"repo.h", kHeader}};
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
  FeedbackItem tasks = measured("Repo::tasks(int) const", 1 * kMs);
  tasks.result_size = SizeStats{45, 60};
  InMemoryFeedback view({tasks, measured("Repo::lookup(int) const", 1 * kMs)});
  SnapshotPtr s = t.analyze(view);
  const FunctionInfo* f = findFunction(*s, "perOwner(const Repo &, int)");
  ASSERT_NE(f, nullptr);
  std::vector<const Node*> loops = testing::nodesOfKind(*f, NodeKind::Loop);
  ASSERT_EQ(loops.size(), 3u);
  EXPECT_EQ(loops[1]->range_var_name, "hours");
  EXPECT_EQ(loops[1]->iteration_source, IterationSource::DataFlow);
  ASSERT_TRUE(loops[1]->iterations);
  EXPECT_DOUBLE_EQ(*loops[1]->iterations, 45);
  EXPECT_EQ(loops[2]->range_var_name, "seen");
  EXPECT_EQ(loops[2]->iteration_source, IterationSource::Default);
}

// `m[k]` bounds a later loop over m only where the function starts m empty: a static local keeps
// what earlier calls inserted, a reference names a map filled elsewhere, and a copy starts with
// what it copied, so each holds more than this call's insertions (the default count stays).
TEST(DataFlowIterationsTest, AMapsSubscriptBoundsOnlyAMapTheFunctionStartsEmpty) {
  TestTU t;
  t.headers = {{"repo.h", kHeader}};
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
  FeedbackItem tasks = measured("Repo::tasks(int) const", 1 * kMs);
  tasks.result_size = SizeStats{45, 60};
  InMemoryFeedback view({tasks, measured("Repo::lookup(int) const", 1 * kMs)});
  SnapshotPtr s = t.analyze(view);
  const FunctionInfo* f = findFunction(*s, "kept(const Repo &, int, const std::map<int, int> &)");
  ASSERT_NE(f, nullptr);
  std::vector<const Node*> loops = testing::nodesOfKind(*f, NodeKind::Loop);
  ASSERT_EQ(loops.size(), 5u);
  for (int i : {1, 2, 3}) {
    SCOPED_TRACE(loops[i]->range_var_name);
    EXPECT_EQ(loops[i]->iteration_source, IterationSource::Default);
  }
  EXPECT_EQ(loops[4]->range_var_name, "fresh");
  EXPECT_EQ(loops[4]->iteration_source, IterationSource::DataFlow);
}

TEST(DataFlowIterationsTest, RangeOverALocalInitializedFromACallUsesThatProducer) {
  TestTU t;
  t.headers = {{"repo.h", kHeader}};
  t.code = R"src(
#include "repo.h"
int sum(const Repo& r, int story) {
  const auto tasks = r.tasks(story);
  int s = 0;
  for (const Task& t : tasks) s += r.effort(t.id);
  return s;
}
)src";
  FeedbackItem tasks = measured("Repo::tasks(int) const", 1 * kMs);
  tasks.result_size = SizeStats{12, 20};
  InMemoryFeedback view({tasks, measured("Repo::effort(int) const", 1 * kMs)});
  SnapshotPtr s = t.analyze(view);
  const FunctionInfo* f = findFunction(*s, "sum(const Repo &, int)");
  ASSERT_NE(f, nullptr);
  std::vector<const Node*> loops = testing::nodesOfKind(*f, NodeKind::Loop);
  ASSERT_EQ(loops.size(), 1u);
  EXPECT_EQ(loops[0]->iteration_source, IterationSource::ProducerSize);
  EXPECT_DOUBLE_EQ(*loops[0]->iterations, 12);
}

// A guard production shows: effort() ran on 9 of the 45 tasks per call, so the new owner() call
// beside it in the same arm runs 9 times, and a new call nested deeper in the arm is weighted
// by 9 / 45 = 20 % rather than by the guard's static prior.
TEST(BranchFromProductionTest, ArmShareComesFromAMeasuredCallAtTheTopOfTheArm) {
  TestTU t;
  t.headers = {{"repo.h", kHeader}};
  t.code = R"src(
#include "repo.h"
int total(const Repo& r, int story) {
  int sum = 0;
  for (const Task& t : r.tasks(story)) {
    if (t.id > 100) {
      sum += r.effort(t.id);
      for (int i = 0; i < 2; ++i) sum += r.owner(i);
    }
  }
  return sum;
}
)src";
  FeedbackItem tasks = measured("Repo::tasks(int) const", 1 * kMs);
  tasks.callsites = {callSite(kFn, 1 * kMs, 1)};
  tasks.result_size = SizeStats{45, 60};
  FeedbackItem effort = measured("Repo::effort(int) const", 0.5 * kMs);
  effort.callsites = {callSite(kFn, 0.5 * kMs, 9)};
  FeedbackItem loop_owner = measured("Repo::owner(int) const", 0.1 * kMs);
  loop_owner.callsites = {callSite("other()", 0.1 * kMs, 1)};
  FeedbackItem total = measured(kFn, 6 * kMs);
  InMemoryFeedback view({tasks, effort, loop_owner, total});
  SnapshotPtr s = t.analyze(view);
  const FunctionInfo* f = findFunction(*s, kFn);
  ASSERT_NE(f, nullptr);
  std::vector<const Node*> branches = testing::nodesOfKind(*f, NodeKind::Branch);
  ASSERT_EQ(branches.size(), 1u);
  EXPECT_TRUE(branches[0]->branch_measured);
  ASSERT_EQ(branches[0]->arm_probabilities.size(), 2u);
  EXPECT_NEAR(branches[0]->arm_probabilities[0], 0.2, 1e-9);
  ASSERT_EQ(f->added.size(), 1u);  // owner() in the inner loop: new (room test or not)
  double k = 1;
  for (const CostFactor& factor : f->added[0].factors) {
    if (factor.kind == CostFactor::Kind::Branch) {
      EXPECT_FALSE(factor.assumed);
      EXPECT_NEAR(factor.value, 0.2, 1e-9);
    }
    k *= factor.value;
  }
  EXPECT_NEAR(k, 45 * 0.2 * 2, 1e-6);
}

}  // namespace
}  // namespace perfhat::analysis
