// `a && f()` / `a || f()`: the right operand runs only when the left one lets it. Real libclang
// parses of small in-memory TUs, an in-memory feedback view, analyze(). Durations in nanoseconds.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/test_units.h"
#include "server/analysis/analyze.h"
#include "server/analysis/inference.h"
#include "server/analysis/testing/test_tu.h"

namespace perfhat::analysis {
namespace {

using testing::callSite;

using testing::findFunction;
using testing::nodesOfKind;
using testing::TestTU;

using perfhat::test_units::kMs;

const char* kShortCircuitHeader = R"src(
#include <vector>
struct Task { int id; bool open; };
struct Repo {
  std::vector<Task> tasks(int story) const;
  int effort(int task) const;
  bool known(int user) const;
};
)src";

// The branches the short-circuit rule made, in pre-order.
std::vector<const Node*> shortCircuits(const FunctionInfo& f) {
  std::vector<const Node*> sc;
  for (const Node* n : nodesOfKind(f, NodeKind::Branch))
    if (n->branch.prior_reason.short_circuit != BranchPrior::ShortCircuit::None) sc.push_back(n);
  return sc;
}

FeedbackItem measured(const std::string& key, double mean_ns) {
  return testing::measuredItem(key, mean_ns, 1.2 * mean_ns, 1.5 * mean_ns, 100);
}

// The right operand becomes arm 0 of a branch whose condition is the left operand; its prior is
// the left operand's heuristic (&&), its complement (||), or even odds, and says so. An operator
// without a call on the right adds no node.
TEST(ShortCircuitTest, RightOperandWithACallIsAnArmWithTheLeftOperandsPrior) {
  TestTU t;
  t.headers = {{"repo.h", kShortCircuitHeader}};
  t.code = R"src(
#include "repo.h"
int check(const Repo& r, const Task* p, int n, bool flag) {
  int x = 0;
  if (p && r.known(n)) ++x;        // pointer heuristic: left holds 20/32
  if (n == 3 || r.known(n)) ++x;   // opcode heuristic: left holds 12/32, right runs 20/32
  if (flag && r.known(n)) ++x;     // no heuristic for a bool
  if (p && n > 2) ++x;             // no call on the right: no node of its own
  return x;
}
)src";
  auto b = t.build();
  const FunctionInfo* f = findFunction(b->unit, "check(const Repo &, const Task *, int, bool)");
  ASSERT_NE(f, nullptr);
  const std::vector<const Node*> sc = shortCircuits(*f);
  ASSERT_EQ(sc.size(), 3u);
  EXPECT_EQ(nodesOfKind(*f, NodeKind::Branch).size(), 7u);  // four ifs, three operators
  const double likely = 20.0 / 32;
  EXPECT_DOUBLE_EQ(sc[0]->branch.prior.value_or(-1), likely);
  EXPECT_EQ(sc[0]->branch.prior_reason.heuristics,
            (std::vector<HeuristicMatch>{{BranchHeuristic::PointerNonNull}}));
  EXPECT_DOUBLE_EQ(sc[1]->branch.prior.value_or(-1), likely);
  EXPECT_EQ(sc[1]->branch.prior_reason.short_circuit, BranchPrior::ShortCircuit::Or);
  EXPECT_DOUBLE_EQ(sc[2]->branch.prior.value_or(-1), 0.5);
  EXPECT_TRUE(sc[2]->branch.prior_reason.heuristics.empty());  // even odds
  for (const Node* branch : sc) {
    std::vector<int> call_arms;
    for (int c : branch->children)
      if (f->nodes[c].kind == NodeKind::Call) call_arms.push_back(f->nodes[c].arm);
    EXPECT_THAT(call_arms, ::testing::ElementsAre(0));  // known(): the right operand only
  }
}

// A new `x && call()` costs the call times the prior, and the prior's range reaches from half
// of it to all of it: the call is a new cost weighted by a stated, widened assumption.
TEST(ShortCircuitTest, NewCallOnTheRightIsWeightedByThePriorWithAWidenedRange) {
  TestTU t;
  t.headers = {{"repo.h", kShortCircuitHeader}};
  t.code = R"src(
#include "repo.h"
int total(const Repo& r, int story, bool flag) {
  int sum = 0;
  for (const Task& t : r.tasks(story)) {
    sum += r.effort(t.id);
    if (flag && r.known(t.id)) ++sum;
  }
  return sum;
}
)src";
  FeedbackItem tasks = measured("Repo::tasks(int) const", 1 * kMs);
  tasks.callsites = {callSite("total(const Repo &, int, bool)", 1 * kMs, 1)};
  tasks.result_size = SizeStats{10, 12};
  FeedbackItem effort = measured("Repo::effort(int) const", 0.5 * kMs);
  effort.callsites = {callSite("total(const Repo &, int, bool)", 0.5 * kMs, 10)};
  FeedbackItem known = measured("Repo::known(int) const", 2 * kMs);
  known.callsites = {callSite("other()", 2 * kMs, 1)};
  InMemoryFeedback view({tasks, effort, known});
  SnapshotPtr s = t.analyze(view);
  const FunctionInfo* f = findFunction(*s, "total(const Repo &, int, bool)");
  ASSERT_NE(f, nullptr);
  const Node* call = nullptr;
  for (const Node& n : f->nodes)
    if (n.kind == NodeKind::Call && n.call.name == "known") call = &n;
  ASSERT_NE(call, nullptr);
  const Node& sc = f->nodes[call->parent];
  ASSERT_EQ(sc.kind, NodeKind::Branch);
  EXPECT_EQ(call->arm, 0);
  // Even odds: 10 iterations × 0.5 × 2 ms, where the call counted in full would be 20 ms.
  EXPECT_NEAR(sc.estimate.dist.mean_ns, 0.5 * 2 * kMs, 1);
  const auto* prior = sc.estimate.derivation.assumption<fact::StaticPrior>();
  ASSERT_NE(prior, nullptr);
  EXPECT_NE(prior->heuristic.short_circuit, BranchPrior::ShortCircuit::None);
}

// Production measured the right operand's call from this function on 3 of the 10 tasks per
// call: that share replaces the prior.
TEST(ShortCircuitTest, ProductionsCountOfTheRightOperandsCallIsItsShare) {
  TestTU t;
  t.headers = {{"repo.h", kShortCircuitHeader}};
  t.code = R"src(
#include "repo.h"
int total(const Repo& r, int story) {
  int sum = 0;
  for (const Task& t : r.tasks(story)) {
    if (t.open && r.known(t.id)) sum += r.effort(t.id);
  }
  return sum;
}
)src";
  const std::string fn = "total(const Repo &, int)";
  FeedbackItem tasks = measured("Repo::tasks(int) const", 1 * kMs);
  tasks.callsites = {callSite(fn, 1 * kMs, 1)};
  tasks.result_size = SizeStats{10, 12};
  FeedbackItem known = measured("Repo::known(int) const", 2 * kMs);
  known.callsites = {callSite(fn, 2 * kMs, 3)};
  FeedbackItem effort = measured("Repo::effort(int) const", 0.5 * kMs);
  effort.callsites = {callSite(fn, 0.5 * kMs, 2)};
  InMemoryFeedback view({tasks, known, effort, measured(fn, 8 * kMs)});
  SnapshotPtr s = t.analyze(view);
  const FunctionInfo* f = findFunction(*s, fn);
  ASSERT_NE(f, nullptr);
  const Node* sc = nullptr;
  for (const Node* n : nodesOfKind(*f, NodeKind::Branch))
    if (n->branch.prior_reason.short_circuit != BranchPrior::ShortCircuit::None) sc = n;
  ASSERT_NE(sc, nullptr);
  EXPECT_TRUE(sc->branch.measured);
  ASSERT_EQ(sc->branch.arm_probabilities.size(), 2u);
  EXPECT_NEAR(sc->branch.arm_probabilities[0], 0.3, 1e-9);
}

// `a && f(1) && f(2) || f(3)` nests to the left; its operators become sibling branches in
// source order (the first operand the condition of the first), not a branch inside a branch, so
// a generated chain of thousands is not cut at the nesting limit. Each keeps its own operator.
TEST(ShortCircuitTest, AChainOfOperatorsIsSiblingBranchesInSourceOrder) {
  TestTU t;
  t.headers = {{"repo.h", kShortCircuitHeader}};
  t.code = R"src(
#include "repo.h"
int check(const Repo& r, const Task* p) {
  if (p && r.known(1) && r.known(2) || r.known(3)) return 1;
  return 0;
}
)src";
  auto b = t.build();
  const FunctionInfo* f = findFunction(b->unit, "check(const Repo &, const Task *)");
  ASSERT_NE(f, nullptr);
  const std::vector<const Node*> sc = shortCircuits(*f);
  ASSERT_EQ(sc.size(), 3u);
  EXPECT_EQ(sc[0]->parent, sc[1]->parent);
  EXPECT_EQ(sc[1]->parent, sc[2]->parent);
  EXPECT_EQ(f->nodes[sc[0]->parent].kind, NodeKind::Branch);  // the `if`
  EXPECT_EQ(sc[0]->branch.prior_reason.heuristics,
            (std::vector<HeuristicMatch>{{BranchHeuristic::PointerNonNull}}));
  EXPECT_EQ(sc[1]->branch.prior_reason.short_circuit, BranchPrior::ShortCircuit::And);
  EXPECT_EQ(sc[2]->branch.prior_reason.short_circuit, BranchPrior::ShortCircuit::Or);
  for (size_t i = 0; i < sc.size(); ++i) {
    std::vector<int> call_arms;
    for (int c : sc[i]->children)
      if (f->nodes[c].kind == NodeKind::Call) call_arms.push_back(f->nodes[c].arm);
    EXPECT_THAT(call_arms, ::testing::ElementsAre(0)) << i;  // known(i + 1) only
  }
  EXPECT_LT(sc[0]->range.start.column, sc[1]->range.end.column);
  EXPECT_LT(sc[1]->range.end.column, sc[2]->range.end.column);
}

// A kept call under a condition that changed (c101: `&& state != done` put before it) is not
// where production counted it: production's count belongs to the old condition, so the call is
// one gone (production's 30 per call) and one new (weighed by the new condition's arms). A
// renamed loop variable leaves the condition the same, and the call kept.
TEST(ShortCircuitTest, AKeptCallUnderAChangedConditionIsNotCountedWhereItWas) {
  const char* deployed = R"src(
#include "repo.h"
int narrowed(const Repo& r, int story) {
  int s = 0;
  for (const Task& t : r.tasks(story))
    if (t.id > 0) s += r.effort(t.id);
  return s;
}
int renamed(const Repo& r, int story) {
  int s = 0;
  for (const Task& t : r.tasks(story))
    if (t.id > 0) s += r.effort(t.id);
  return s;
}
)src";
  const char* now = R"src(
#include "repo.h"
int narrowed(const Repo& r, int story) {
  int s = 0;
  for (const Task& t : r.tasks(story))
    if (t.open && t.id > 0) s += r.effort(t.id);
  return s;
}
int renamed(const Repo& r, int story) {
  int s = 0;
  for (const Task& task : r.tasks(story))
    if (task.id > 0) s += r.effort(task.id);
  return s;
}
)src";
  TestTU was, is;
  was.code = deployed;
  is.code = now;
  was.headers = is.headers = {{"repo.h", kShortCircuitHeader}};
  auto built_was = was.build();
  auto built_is = is.build();
  const std::string narrowed = "narrowed(const Repo &, int)",
                    renamed = "renamed(const Repo &, int)";
  FeedbackItem tasks = measured("Repo::tasks(int) const", 1 * kMs);
  tasks.result_size = SizeStats{45, 60};
  tasks.callsites = {callSite(narrowed, 1 * kMs, 1), callSite(renamed, 1 * kMs, 1)};
  FeedbackItem effort = measured("Repo::effort(int) const", 0.5 * kMs);
  effort.callsites = {callSite(narrowed, 0.5 * kMs, 30), callSite(renamed, 0.5 * kMs, 30)};
  InMemoryFeedback view({tasks, effort, measured(narrowed, 16 * kMs), measured(renamed, 16 * kMs)});
  SnapshotPtr s =
      analyze(built_is->unit, view, is.options, 0, DeployedUnit{&built_was->unit, "abc1234"});
  const FunctionInfo* f = findFunction(*s, narrowed);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->deployed, DeployedBody::Changed);
  bool gone = false, added = false;
  for (const AddedCost& a : f->added) {
    if (a.status == AddedCost::Status::Removed && a.removed_name.name == "effort") {
      gone = true;
      EXPECT_DOUBLE_EQ(a.executions, 30);
    }
    if (a.status == AddedCost::Status::New) added = true;
  }
  EXPECT_TRUE(gone);
  EXPECT_TRUE(added);
  const FunctionInfo* g = findFunction(*s, renamed);
  ASSERT_NE(g, nullptr);
  EXPECT_TRUE(g->added.empty());
}

// An edited comment inside a multi-line condition, in a function changed elsewhere, leaves the
// condition the same: the call under it keeps production's count (no gone, no new).
TEST(ShortCircuitTest, AnEditedCommentInAConditionKeepsTheCallUnderIt) {
  const char* deployed = R"src(
#include "repo.h"
int commented(const Repo& r, int story) {
  int s = 0;
  for (const Task& t : r.tasks(story))
    if (t.id > 0 &&  // a real task
        t.open)
      s += r.effort(t.id);
  return s;
}
)src";
  const char* now = R"src(
#include "repo.h"
int commented(const Repo& r, int story) {
  int s = 1;
  for (const Task& t : r.tasks(story))
    if (t.id > 0 &&  // a task the repository knows
        t.open)
      s += r.effort(t.id);
  return s;
}
)src";
  TestTU was, is;
  was.code = deployed;
  is.code = now;
  was.headers = is.headers = {{"repo.h", kShortCircuitHeader}};
  auto built_was = was.build();
  auto built_is = is.build();
  const std::string fn = "commented(const Repo &, int)";
  FeedbackItem tasks = measured("Repo::tasks(int) const", 1 * kMs);
  tasks.result_size = SizeStats{45, 60};
  tasks.callsites = {callSite(fn, 1 * kMs, 1)};
  FeedbackItem effort = measured("Repo::effort(int) const", 0.5 * kMs);
  effort.callsites = {callSite(fn, 0.5 * kMs, 30)};
  InMemoryFeedback view({tasks, effort, measured(fn, 16 * kMs)});
  SnapshotPtr s =
      analyze(built_is->unit, view, is.options, 0, DeployedUnit{&built_was->unit, "abc1234"});
  const FunctionInfo* f = findFunction(*s, fn);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->deployed, DeployedBody::Changed);
  EXPECT_TRUE(f->added.empty());
}

// `i < n` is a comparison, not a template argument list: renaming `i` to `j`, in a function
// changed elsewhere, leaves the condition the same and the call under it at production's count.
// A template's name before its `<` is kept as written.
TEST(ShortCircuitTest, ARenamedOperandOfLessThanKeepsTheCallUnderIt) {
  const char* deployed = R"src(
#include "repo.h"
template <class T> T hi(T a, T b) { return a + b; }
template <class T> T lo(T a, T b) { return a - b; }
int first(const Repo& r, int story, int n) {
  int s = 0;
  for (int i = 0; i < 8; ++i)
    if (i < n) s += r.effort(i);
  return s;
}
int capped(const Repo& r, int story, int n) {
  int s = 0;
  for (int i = 0; i < 8; ++i)
    if (hi<int>(i, n) > 4) s += r.effort(i);
  return s;
}
)src";
  const char* now = R"src(
#include "repo.h"
template <class T> T hi(T a, T b) { return a + b; }
template <class T> T lo(T a, T b) { return a - b; }
int first(const Repo& r, int story, int n) {
  int s = story;
  for (int j = 0; j < 8; ++j)
    if (j < n) s += r.effort(j);
  return s;
}
int capped(const Repo& r, int story, int n) {
  int s = story;
  for (int i = 0; i < 8; ++i)
    if (lo<int>(i, n) > 4) s += r.effort(i);
  return s;
}
)src";
  TestTU was, is;
  was.code = deployed;
  is.code = now;
  was.headers = is.headers = {{"repo.h", kShortCircuitHeader}};
  auto built_was = was.build();
  auto built_is = is.build();
  const std::string fn = "first(const Repo &, int, int)", capped = "capped(const Repo &, int, int)";
  FeedbackItem effort = measured("Repo::effort(int) const", 0.5 * kMs);
  effort.callsites = {callSite(fn, 0.5 * kMs, 3), callSite(capped, 0.5 * kMs, 3)};
  InMemoryFeedback view({effort, measured(fn, 2 * kMs), measured(capped, 2 * kMs)});
  SnapshotPtr s =
      analyze(built_is->unit, view, is.options, 0, DeployedUnit{&built_was->unit, "abc1234"});
  const FunctionInfo* f = findFunction(*s, fn);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->deployed, DeployedBody::Changed);
  EXPECT_TRUE(f->added.empty());
  // A template named before `<` stays as written: hi<int> -> lo<int> is a changed condition.
  const FunctionInfo* g = findFunction(*s, capped);
  ASSERT_NE(g, nullptr);
  EXPECT_FALSE(g->added.empty());
}

}  // namespace
}  // namespace perfhat::analysis
