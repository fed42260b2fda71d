// Diff-aware prediction (DESIGN §10, "What production ran"): the code as written against the
// body production ran, both parsed by libclang; measured − removed + added, node by node.
#include <gtest/gtest.h>

#include "common/test_units.h"
#include "server/analysis/analyze.h"
#include "server/analysis/inference.h"
#include "server/analysis/task_repo_fixture.h"
#include "server/analysis/testing/test_tu.h"

namespace perfhat::analysis {
namespace {

using testing::callSite;

using testing::findFunction;
using testing::TestTU;

using perfhat::test_units::kMs;

using testing::kTaskRepoHeader;
using testing::measuredMean;

struct Both {
  std::unique_ptr<TestTU::Built> now, deployed;
  SnapshotPtr snap;
};

Both analyseAgainst(const std::string& deployed_code, const std::string& code,
                    const FeedbackView& view) {
  TestTU was, is;
  was.code = deployed_code;
  is.code = code;
  was.headers = is.headers = {{"repo.h", kTaskRepoHeader}};
  Both b;
  b.deployed = was.build();
  b.now = is.build();
  b.snap = analyze(b.now->unit, view, is.options, 0, DeployedUnit{&b.deployed->unit, "abc1234"});
  return b;
}

const std::string kFn = "total(const Repo &, int)";

// Production: total() 25 ms, of which 45 effort() calls of 0.5 ms in the loop (an N+1).
InMemoryFeedback nPlusOneData() {
  FeedbackItem tasks = measuredMean("Repo::tasks(int) const", 1 * kMs);
  tasks.callsites = {callSite(kFn, 1 * kMs, 1)};
  tasks.result_size = SizeStats{45, 60};
  FeedbackItem effort = measuredMean("Repo::effort(int) const", 0.5 * kMs);
  effort.callsites = {callSite(kFn, 0.5 * kMs, 45)};
  FeedbackItem total = measuredMean(kFn, 25 * kMs);
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
  FeedbackItem owner = measuredMean("Repo::owner(int) const", 3 * kMs);
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
  EXPECT_EQ(gone.removed_name.name, "effort");
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
  for (const AddedCost& a : f->added) EXPECT_NE(a.removed_name.name, "effort");
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
  FeedbackItem owner = measuredMean("Repo::owner(int) const", 0.1 * kMs);
  owner.callsites = {callSite("other()", 0.1 * kMs, 1)};
  view.add(owner);
  Both b = analyseAgainst(kDeployed, counted, view);
  const FunctionInfo* f = findFunction(*b.snap, kFn);
  ASSERT_NE(f, nullptr);
  const AddedCost* owners = nullptr;
  for (const AddedCost& a : f->added)
    if (a.status == AddedCost::Status::New && f->nodes[a.node].call.name == "owner") owners = &a;
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
  t.headers = {{"repo.h", kTaskRepoHeader}};
  const std::string lambda = kFn + "::lambda#1";
  FeedbackItem tasks = measuredMean("Repo::tasks(int) const", 1 * kMs);
  tasks.callsites = {callSite(kFn, 1 * kMs, 1)};
  tasks.result_size = SizeStats{45, 60};
  FeedbackItem effort = measuredMean("Repo::effort(int) const", 0.5 * kMs);
  effort.callsites = {callSite(kFn, 0.5 * kMs, 1), callSite(lambda, 0.5 * kMs, 1)};
  FeedbackItem owner = measuredMean("Repo::owner(int) const", 0.1 * kMs);
  owner.callsites = {callSite(lambda, 0.1 * kMs, 1)};
  FeedbackItem total = measuredMean(kFn, 30 * kMs);
  InMemoryFeedback view({tasks, effort, owner, total});
  auto b = t.build();
  SnapshotPtr snap = analyze(b->unit, view, t.options, 0);
  const FunctionInfo* f = findFunction(*snap, kFn);
  ASSERT_NE(f, nullptr);
  int in_lambda = 0;
  for (const Node& n : f->nodes) in_lambda += n.kind == NodeKind::Call && n.call.via_lambda;
  EXPECT_EQ(in_lambda, 2);  // the calls are still modelled in f, per element
  EXPECT_TRUE(f->added.empty()) << f->added.size() << " added, first on "
                                << f->nodes[f->added.front().node].call.name;
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
  FeedbackItem tasks = measuredMean("Repo::tasks(int) const", 1 * kMs);
  tasks.callsites = {callSite(kFn, 1 * kMs, 2)};
  tasks.result_size = SizeStats{45, 60};
  FeedbackItem effort = measuredMean("Repo::effort(int) const", 0.5 * kMs);
  effort.callsites = {callSite(kFn, 0.5 * kMs, 45)};
  FeedbackItem total = measuredMean(kFn, 25 * kMs);
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
  FeedbackItem tasks = measuredMean("Repo::tasks(int) const", 1 * kMs);
  tasks.callsites = {callSite(kFn, 1 * kMs, 1)};
  tasks.result_size = SizeStats{45, 60};
  FeedbackItem effort = measuredMean("Repo::effort(int) const", 0.5 * kMs);
  effort.callsites = {callSite(kFn, 0.5 * kMs, 1)};
  FeedbackItem total = measuredMean(kFn, 3 * kMs);
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
  FeedbackItem owner = measuredMean("Repo::owner(int) const", 0.1 * kMs);
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

// A guard production shows: effort() ran on 9 of the 45 tasks per call, so the new owner() call
// beside it in the same arm runs 9 times, and a new call nested deeper in the arm is weighted
// by 9 / 45 = 20 % rather than by the guard's static prior.
TEST(BranchFromProductionTest, ArmShareComesFromAMeasuredCallAtTheTopOfTheArm) {
  TestTU t;
  t.headers = {{"repo.h", kTaskRepoHeader}};
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
  FeedbackItem tasks = measuredMean("Repo::tasks(int) const", 1 * kMs);
  tasks.callsites = {callSite(kFn, 1 * kMs, 1)};
  tasks.result_size = SizeStats{45, 60};
  FeedbackItem effort = measuredMean("Repo::effort(int) const", 0.5 * kMs);
  effort.callsites = {callSite(kFn, 0.5 * kMs, 9)};
  FeedbackItem loop_owner = measuredMean("Repo::owner(int) const", 0.1 * kMs);
  loop_owner.callsites = {callSite("other()", 0.1 * kMs, 1)};
  FeedbackItem total = measuredMean(kFn, 6 * kMs);
  InMemoryFeedback view({tasks, effort, loop_owner, total});
  SnapshotPtr s = t.analyze(view);
  const FunctionInfo* f = findFunction(*s, kFn);
  ASSERT_NE(f, nullptr);
  std::vector<const Node*> branches = testing::nodesOfKind(*f, NodeKind::Branch);
  ASSERT_EQ(branches.size(), 1u);
  EXPECT_TRUE(branches[0]->branch.measured);
  ASSERT_EQ(branches[0]->branch.arm_probabilities.size(), 2u);
  EXPECT_NEAR(branches[0]->branch.arm_probabilities[0], 0.2, 1e-9);
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
