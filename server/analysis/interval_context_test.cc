// Honest intervals and context-dependent callee costs: real libclang parses of the code as written
// and as production ran it, an in-memory feedback view, analyze(). Durations in nanoseconds.
#include <cmath>
#include <variant>

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

const std::string kFn = "report(const Story &)";
const std::string kHelper = "taskCount(const Story &)";

// The helper counts a story's tasks. Production called it only from summary(), always after
// summary() had loaded the tasks: from there tasks() took 10 µs. From loader() it took 4 ms: the
// collection's two outcomes are both in tasks()'s own distribution (p50 10 µs, p90 4 ms).
std::vector<FeedbackItem> lazyItems() {
  FeedbackItem tasks = measured("Story::tasks() const", 0.01 * kMs, 4 * kMs, 5 * kMs);
  tasks.callsites = {callSite(kHelper, 0.01 * kMs, 1), callSite("loader()", 4 * kMs, 1)};
  FeedbackItem helper = measured(kHelper, 0.02 * kMs, 0.03 * kMs, 0.05 * kMs);
  helper.callsites = {callSite("summary()", 0.02 * kMs, 1)};
  FeedbackItem points = measured("Story::points() const", 1 * kMs, 1.2 * kMs, 1.5 * kMs);
  points.callsites = {callSite(kFn, 1 * kMs, 1)};
  FeedbackItem report = measured(kFn, 2 * kMs, 2.4 * kMs, 3 * kMs);
  report.versions = {"abc1234"};
  return {tasks, helper, points, report};
}

InMemoryFeedback lazyData() { return InMemoryFeedback(lazyItems()); }

const char* kDeployed = R"src(
#include "repo.h"
int taskCount(const Story& s) { return static_cast<int>(s.tasks().size()); }
int report(const Story& s) { return s.points(); }
)src";

const char* kWithHelper = R"src(
#include "repo.h"
int taskCount(const Story& s) { return static_cast<int>(s.tasks().size()); }
int report(const Story& s) { return s.points() + taskCount(s); }
)src";

struct Both {
  std::unique_ptr<TestTU::Built> now, deployed;
  SnapshotPtr snap;
};

Both analyseAgainst(const std::string& deployed_code, const std::string& code,
                    const FeedbackView& view, const AnalysisOptions& options = {}) {
  TestTU was, is;
  was.code = deployed_code;
  is.code = code;
  was.headers = is.headers = {{"repo.h", testing::kStoryRepoHeader}};
  is.options = options;
  Both b;
  b.deployed = was.build();
  b.now = is.build();
  b.snap = analyze(b.now->unit, view, is.options, 0, DeployedUnit{&b.deployed->unit, "abc1234"});
  return b;
}

const Node* callOf(const FunctionInfo& f, const std::string& name) {
  for (const Node& n : f.nodes)
    if (n.kind == NodeKind::Call && n.call.name == name) return &n;
  return nullptr;
}

TEST(CalleeContextTest, HelperWithABimodalInnerCallGetsTheSlowOutcomeAsItsRangesTop) {
  Both b = analyseAgainst(kDeployed, kWithHelper, lazyData());
  const FunctionInfo* f = findFunction(*b.snap, kFn);
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(f->deployed, DeployedBody::Changed);
  const Node* call = callOf(*f, "taskCount");
  ASSERT_NE(call, nullptr);
  // Costed as production's caller ran it (the fast outcome) ...
  EXPECT_NEAR(call->estimate.dist.mean_ns, 0.02 * kMs, 1);
  // ... with the slow outcome of tasks() as what it may cost more here.
  EXPECT_NEAR(call->estimate.context_extra_ns, (4 - 0.01) * kMs, 1);
  ASSERT_EQ(call->estimate.context.size(), 1u);
  EXPECT_EQ(call->estimate.context[0].inner.name, "tasks");
  const auto* stated = call->estimate.derivation.assumption<analysis::fact::ContextDependent>();
  ASSERT_NE(stated, nullptr);
  EXPECT_NEAR(stated->extra_ns, (4 - 0.01) * kMs, 1);
  // The function's range reaches the slow outcome; its p50 stays the fast one.
  ASSERT_TRUE(f->root().estimate.interval);
  EXPECT_NEAR(f->root().estimate.dist.mean_ns, 2.02 * kMs, 1);
  EXPECT_GE(f->root().estimate.interval->hi.mean_ns, (2 + 4) * kMs);
  EXPECT_LE(f->root().estimate.interval->lo.mean_ns, 2.02 * kMs);
}

// plan() walks the stories it fetches itself. The items of lazyItems() plus plan()'s own data:
// `tasks_from_plan_ns` > 0 gives tasks() a call site from plan() at that cost.
InMemoryFeedback planData(double tasks_from_plan_ns = 0) {
  std::vector<FeedbackItem> items = lazyItems();
  if (tasks_from_plan_ns > 0)
    items[0].callsites.push_back(callSite("plan()", tasks_from_plan_ns, 5));
  FeedbackItem fetch = measured("fetchStories()", 1 * kMs, 1.2 * kMs, 1.5 * kMs);
  fetch.callsites = {callSite("plan()", 1 * kMs, 1)};
  items[2].callsites.push_back(callSite("plan()", 1 * kMs, 5));  // points()
  FeedbackItem plan = measured("plan()", 8 * kMs, 9 * kMs, 10 * kMs);
  plan.versions = {"abc1234"};
  items.push_back(fetch);
  items.push_back(plan);
  return InMemoryFeedback(items);
}

const char* kPlanDeployed = R"src(
#include "repo.h"
int taskCount(const Story& s) { return static_cast<int>(s.tasks().size()); }
int plan() {
  int n = 0;
  for (const Story& s : fetchStories()) n += s.points();
  return n;
}
)src";

// Nothing in plan() touches the fetched stories' tasks: the helper's tasks() is their first
// access and loads them, so the new call costs the slow outcome, not production's fast one.
TEST(CalleeContextTest, FirstAccessOfAFetchedElementCostsTheSlowOutcome) {
  const char* now = R"src(
#include "repo.h"
int taskCount(const Story& s) { return static_cast<int>(s.tasks().size()); }
int plan() {
  int n = 0;
  for (const Story& s : fetchStories()) n += s.points() + taskCount(s);
  return n;
}
)src";
  Both b = analyseAgainst(kPlanDeployed, now, planData());
  const FunctionInfo* f = findFunction(*b.snap, "plan()");
  ASSERT_NE(f, nullptr);
  const Node* call = callOf(*f, "taskCount");
  ASSERT_NE(call, nullptr);
  EXPECT_NEAR(call->estimate.dist.mean_ns, (0.02 + 4 - 0.01) * kMs, 1);
  EXPECT_EQ(call->estimate.context_extra_ns, 0);  // in the value, not only in the range
  const auto* first = call->estimate.derivation.assumption<analysis::fact::FirstAccessHere>();
  ASSERT_NE(first, nullptr);
  EXPECT_NEAR(first->extra_ns, (4 - 0.01) * kMs, 1);
  ASSERT_EQ(first->outcomes.size(), 1u);
  EXPECT_EQ(first->outcomes[0].inner.name, "tasks");
  EXPECT_EQ(call->estimate.derivation.assumption<analysis::fact::ContextDependent>(), nullptr);
  // The range still reaches down to the fast outcome (the producer may have loaded them).
  EXPECT_NEAR(call->estimate.dist.mean_ns * call->estimate.spread_lo, 0.02 * kMs, 1);
}

// The removed first access (c78): plan() loaded each story's tasks with s.tasks() and then
// called taskCount(s), which production measured from here in the fast outcome. With s.tasks()
// gone, taskCount(s) loads them: the removal saves the loaded outcome, not the load.
TEST(CalleeContextTest, ARemovedFirstAccessHandsTheLoadToTheNextAccess) {
  const char* deployed = R"src(
#include "repo.h"
int taskCount(const Story& s) { return static_cast<int>(s.tasks().size()); }
int plan() {
  int n = 0;
  for (const Story& s : fetchStories()) n += static_cast<int>(s.tasks().size()) + taskCount(s);
  return n;
}
)src";
  const char* now = R"src(
#include "repo.h"
int taskCount(const Story& s) { return static_cast<int>(s.tasks().size()); }
int plan() {
  int n = 0;
  for (const Story& s : fetchStories()) n += taskCount(s);
  return n;
}
)src";
  std::vector<FeedbackItem> items = lazyItems();
  items[0].callsites.push_back(callSite("plan()", 4 * kMs, 5));     // tasks(): loads
  items[1].callsites.push_back(callSite("plan()", 0.02 * kMs, 5));  // taskCount(): loaded
  FeedbackItem fetch = measured("fetchStories()", 1 * kMs, 1.2 * kMs, 1.5 * kMs);
  fetch.callsites = {callSite("plan()", 1 * kMs, 1)};
  FeedbackItem plan = measured("plan()", 22 * kMs, 24 * kMs, 26 * kMs);
  plan.versions = {"abc1234"};
  items.push_back(fetch);
  items.push_back(plan);
  Both b = analyseAgainst(deployed, now, InMemoryFeedback(items));
  const FunctionInfo* f = findFunction(*b.snap, "plan()");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(f->deployed, DeployedBody::Changed);
  // 22 ms − 5 × the loaded outcome (10 µs), not − 5 × 4 ms.
  EXPECT_NEAR(f->root().estimate.dist.mean_ns, (22 - 5 * 0.01) * kMs, 1);
  const auto* moved = f->root().estimate.derivation.assumption<analysis::fact::LoadMovesOn>();
  ASSERT_NE(moved, nullptr);
  EXPECT_EQ(moved->next.name, "taskCount");
  EXPECT_EQ(moved->object, "s");

  // Without a later access of the value, the removal saves the load.
  const char* dropped = R"src(
#include "repo.h"
int taskCount(const Story& s) { return static_cast<int>(s.tasks().size()); }
int plan() {
  int n = 0;
  for (const Story& s : fetchStories()) n += 1 + 0 * static_cast<int>(sizeof s);
  return n;
}
)src";
  Both c = analyseAgainst(deployed, dropped, InMemoryFeedback(items));
  const FunctionInfo* g = findFunction(*c.snap, "plan()");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->root().estimate.derivation.assumption<analysis::fact::LoadMovesOn>(), nullptr);
  EXPECT_LT(g->root().estimate.dist.mean_ns, (22 - 5 * 3.9) * kMs);
}

// Most calls of tasks() load (p50 0.4 ms, p90 0.5 ms: no slow tail); the fastest, loaded, took
// 2 µs. The loading outcome is then the p50.
TEST(CalleeContextTest, WhenMostCallsLoadTheLoadingOutcomeIsTheP50) {
  const char* now = R"src(
#include "repo.h"
int taskCount(const Story& s) { return static_cast<int>(s.tasks().size()); }
int plan() {
  int n = 0;
  for (const Story& s : fetchStories()) n += s.points() + taskCount(s);
  return n;
}
)src";
  std::vector<FeedbackItem> items = lazyItems();
  items[0] = measured("Story::tasks() const", 0.4 * kMs, 0.5 * kMs, 0.6 * kMs);
  items[0].stats->min_ns = 0.002 * kMs;
  items[0].callsites = {callSite(kHelper, 0.002 * kMs, 1), callSite("loader()", 0.4 * kMs, 1)};
  FeedbackItem fetch = measured("fetchStories()", 1 * kMs, 1.2 * kMs, 1.5 * kMs);
  fetch.callsites = {callSite("plan()", 1 * kMs, 1)};
  items[2].callsites.push_back(callSite("plan()", 1 * kMs, 5));
  FeedbackItem plan = measured("plan()", 8 * kMs, 9 * kMs, 10 * kMs);
  plan.versions = {"abc1234"};
  items.push_back(fetch);
  items.push_back(plan);
  InMemoryFeedback view(items);
  Both b = analyseAgainst(kPlanDeployed, now, view);
  const Node* call = callOf(*findFunction(*b.snap, "plan()"), "taskCount");
  ASSERT_NE(call, nullptr);
  EXPECT_NEAR(call->estimate.dist.mean_ns, (0.02 + 0.4 - 0.002) * kMs, 1);
  const auto* first = call->estimate.derivation.assumption<analysis::fact::FirstAccessHere>();
  ASSERT_NE(first, nullptr);
  EXPECT_NEAR(first->outcomes[0].slow_ns, 0.4 * kMs, 1);
}

// tasks() already ran on the story earlier in the same iteration: the helper finds them loaded.
TEST(CalleeContextTest, AnEarlierCallInTheSameIterationKeepsTheFastOutcome) {
  const char* deployed = R"src(
#include "repo.h"
int taskCount(const Story& s) { return static_cast<int>(s.tasks().size()); }
int plan() {
  int n = 0;
  for (const Story& s : fetchStories()) n += static_cast<int>(s.tasks().size());
  return n;
}
)src";
  const char* now = R"src(
#include "repo.h"
int taskCount(const Story& s) { return static_cast<int>(s.tasks().size()); }
int plan() {
  int n = 0;
  for (const Story& s : fetchStories()) {
    n += static_cast<int>(s.tasks().size());
    n += taskCount(s);
  }
  return n;
}
)src";
  Both b = analyseAgainst(deployed, now, planData(4 * kMs));  // plan()'s own calls load
  const FunctionInfo* f = findFunction(*b.snap, "plan()");
  ASSERT_NE(f, nullptr);
  const Node* call = callOf(*f, "taskCount");
  ASSERT_NE(call, nullptr);
  EXPECT_NEAR(call->estimate.dist.mean_ns, 0.02 * kMs, 1);
  EXPECT_EQ(call->estimate.context_extra_ns, 0);
  EXPECT_EQ(call->estimate.derivation.assumption<analysis::fact::FirstAccessHere>(), nullptr);
  EXPECT_EQ(call->estimate.derivation.assumption<analysis::fact::ContextDependent>(), nullptr);
}

// plan() calls tasks() after the new call, but production measured those calls fast: the stories
// arrive loaded (their producer loads them), so the helper takes the fast outcome too. Measured
// loading instead, the order decides nothing: the slow outcome is only the range's top.
TEST(CalleeContextTest, ThisCallersMeasuredCallsOfTheInnerCalleeTellItsState) {
  const char* deployed = R"src(
#include "repo.h"
int taskCount(const Story& s) { return static_cast<int>(s.tasks().size()); }
int plan() {
  int n = 0;
  for (const Story& s : fetchStories()) n += s.points() + static_cast<int>(s.tasks().size());
  return n;
}
)src";
  const char* now = R"src(
#include "repo.h"
int taskCount(const Story& s) { return static_cast<int>(s.tasks().size()); }
int plan() {
  int n = 0;
  for (const Story& s : fetchStories()) {
    n += taskCount(s);
    n += s.points() + static_cast<int>(s.tasks().size());
  }
  return n;
}
)src";
  Both loaded = analyseAgainst(deployed, now, planData(0.01 * kMs));
  const Node* call = callOf(*findFunction(*loaded.snap, "plan()"), "taskCount");
  ASSERT_NE(call, nullptr);
  EXPECT_NEAR(call->estimate.dist.mean_ns, 0.02 * kMs, 1);
  EXPECT_EQ(call->estimate.context_extra_ns, 0);

  Both loading = analyseAgainst(deployed, now, planData(4 * kMs));
  call = callOf(*findFunction(*loading.snap, "plan()"), "taskCount");
  ASSERT_NE(call, nullptr);
  EXPECT_NEAR(call->estimate.dist.mean_ns, 0.02 * kMs, 1);
  EXPECT_NEAR(call->estimate.context_extra_ns, (4 - 0.01) * kMs, 1);
  EXPECT_EQ(call->estimate.derivation.assumption<analysis::fact::FirstAccessHere>(), nullptr);
}

TEST(CalleeContextTest, UnimodalInnerCallsLeaveTheRangeAlone) {
  std::vector<FeedbackItem> items = lazyItems();
  FeedbackItem& tasks = items[0];  // tasks() as a steady call: one outcome
  tasks.stats->p90_ns = 0.02 * kMs;
  tasks.stats->p99_ns = 0.05 * kMs;
  InMemoryFeedback view(items);
  Both b = analyseAgainst(kDeployed, kWithHelper, view);
  const FunctionInfo* f = findFunction(*b.snap, kFn);
  ASSERT_NE(f, nullptr);
  const Node* call = callOf(*f, "taskCount");
  ASSERT_NE(call, nullptr);
  EXPECT_EQ(call->estimate.context_extra_ns, 0);
  ASSERT_TRUE(f->root().estimate.interval);
  EXPECT_LT(f->root().estimate.interval->hi.mean_ns, 3 * kMs);
}

TEST(IntervalTest, RunToRunDriftWidensTheRangeOfAChangedFunction) {
  AnalysisOptions none;
  none.drift_share = 0;
  Both tight = analyseAgainst(kDeployed, kWithHelper, lazyData(), none);
  Both drifting = analyseAgainst(kDeployed, kWithHelper, lazyData());  // default drift
  const auto& a = findFunction(*tight.snap, kFn)->root().estimate.interval;
  const auto& b = findFunction(*drifting.snap, kFn)->root().estimate.interval;
  ASSERT_TRUE(a && b);
  const double d = AnalysisOptions{}.drift_share;
  ASSERT_GT(d, 0);
  EXPECT_NEAR(b->lo.mean_ns, a->lo.mean_ns * (1 - d), 1);
  EXPECT_NEAR(b->hi.mean_ns, a->hi.mean_ns * (1 + d), 1);
}

TEST(IntervalTest, DriftSeenBetweenTheFeedbacksWindowsWidensBeyondTheDefault) {
  std::vector<FeedbackItem> items = lazyItems();
  FeedbackItem& report = items[3];
  report.stats->window = {"2026-11-25T10:00:00Z", "2026-11-25T11:00:00Z"};
  Stats earlier = *report.stats;
  earlier.window = {"2026-11-24T10:00:00Z", "2026-11-24T11:00:00Z"};
  earlier.mean_ns = 1.6 * kMs;  // the same code measured 25 % faster a day before
  report.baseline = earlier;
  InMemoryFeedback view(items);
  AnalysisOptions none;
  none.drift_share = 0;
  Both tight = analyseAgainst(kDeployed, kWithHelper, lazyData(), none);
  Both seen = analyseAgainst(kDeployed, kWithHelper, view, none);
  const auto& a = findFunction(*tight.snap, kFn)->root().estimate.interval;
  const auto& b = findFunction(*seen.snap, kFn)->root().estimate.interval;
  ASSERT_TRUE(a && b);
  EXPECT_NEAR(b->hi.mean_ns, a->hi.mean_ns * 1.25, 1e3);
}

// A new call nothing is known about: the prediction is a lower bound ("+ ?") and its range
// claims no top.
TEST(IntervalTest, NewCallWithoutDataLeavesTheRangeOpenAbove) {
  const char* with_mystery = R"src(
#include "repo.h"
int taskCount(const Story& s) { return static_cast<int>(s.tasks().size()); }
int report(const Story& s) { return s.points() + mystery(s); }
)src";
  Both b = analyseAgainst(kDeployed, with_mystery, lazyData());
  const FunctionInfo* f = findFunction(*b.snap, kFn);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->root().estimate.unknown_parts, 1);
  ASSERT_TRUE(f->root().estimate.interval);
  EXPECT_TRUE(std::isinf(f->root().estimate.interval->hi.p50_ns));
  EXPECT_LE(f->root().estimate.interval->lo.p50_ns, 2 * kMs);
  Both known = analyseAgainst(kDeployed, kWithHelper, lazyData());
  EXPECT_TRUE(std::isfinite(findFunction(*known.snap, kFn)->root().estimate.interval->hi.p50_ns));
}

// A callee measured from one caller only: the one context says nothing of this caller's, so the
// new call's range is the site's own p50–p90, never a single point.
TEST(IntervalTest, SingleCallSiteRegressionHasARange) {
  TestTU t;
  t.headers = {{"repo.h", testing::kStoryRepoHeader}};
  t.code = R"src(
#include "repo.h"
int report(const Story& s) { return s.points(); }
)src";
  FeedbackItem points = measured("Story::points() const", 1 * kMs, 3 * kMs, 4 * kMs);
  CallSiteStats only = callSite("elsewhere()", 1.5 * kMs, 1, 3 * kMs);
  only.p50_ns = 1 * kMs;
  only.caller_rate_per_s = 5;
  points.callsites = {only};
  InMemoryFeedback view({points});
  SnapshotPtr s = t.analyze(view);
  const FunctionInfo* f = findFunction(*s, kFn);
  ASSERT_NE(f, nullptr);
  const Node* call = callOf(*f, "points");
  ASSERT_NE(call, nullptr);
  EXPECT_EQ(call->estimate.derivation.model, Model::CallsiteRegression);
  EXPECT_NEAR(call->estimate.dist.mean_ns, 1.5 * kMs, 1);
  EXPECT_NEAR(call->estimate.spread_lo, 1.0 / 1.5, 1e-9);
  EXPECT_NEAR(call->estimate.spread_hi, 3.0 / 1.5, 1e-9);
}

// A callee production measured from another caller only: every call returned about 50 stories
// (one kind of input), so from a new caller its input may be of any size and the range reaches
// down to one story's share (100 ms / 50). Where the result sizes varied (p90 2.4 × the mean)
// and the cost is what it is, the data's own range stands.
TEST(OtherInputsTest, OneKindOfInputSeenWidensTheRangeDownToOneElementsShare) {
  TestTU t;
  t.headers = {{"repo.h", testing::kStoryRepoHeader}};
  t.code = R"src(
#include "repo.h"
int page() { return static_cast<int>(fetchStories().size()); }
)src";
  for (const bool one_size : {true, false}) {
    SCOPED_TRACE(one_size ? "one size seen" : "sizes varied");
    FeedbackItem fetch = measured("fetchStories()", 100 * kMs, 110 * kMs, 120 * kMs);
    fetch.callsites = {callSite("tree()", 100 * kMs, 1)};
    fetch.result_size = SizeStats{50, one_size ? 52.0 : 120.0, 200, 100};
    InMemoryFeedback view({fetch});
    SnapshotPtr s = t.analyze(view);
    const FunctionInfo* f = findFunction(*s, "page()");
    ASSERT_NE(f, nullptr);
    const Node* call = callOf(*f, "fetchStories");
    ASSERT_NE(call, nullptr);
    EXPECT_NEAR(call->estimate.dist.mean_ns, 100 * kMs, 1);  // the point stays
    const auto* stated = call->estimate.derivation.assumption<analysis::fact::OtherInputs>();
    if (one_size) {
      EXPECT_NEAR(call->estimate.spread_lo, 1.0 / 50, 1e-9);
      ASSERT_NE(stated, nullptr);
      EXPECT_NEAR(stated->one_element_ns, 2 * kMs, 1);
    } else {
      EXPECT_GT(call->estimate.spread_lo, 0.5);
      EXPECT_EQ(stated, nullptr);
    }
  }
}

}  // namespace
}  // namespace perfhat::analysis
