// Inference (Algorithm 1 + DESIGN §6) end to end: real libclang parses of small in-memory TUs,
// an in-memory feedback view, analyze(). Durations in nanoseconds.
#include "server/analysis/inference.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "server/analysis/analyze.h"
#include "server/analysis/testing/annotations.h"
#include "server/analysis/testing/test_tu.h"

namespace perfhat::analysis {
namespace {

using testing::findFunction;
using testing::nodesOfKind;
using testing::TestTU;
using ::testing::Contains;
using ::testing::HasSubstr;

constexpr double kMs = 1e6;

FeedbackItem item(const std::string& key, double mean_ns, uint64_t count = 100) {
  FeedbackItem it;
  it.key = key;
  Stats s;
  s.count = count;
  s.mean_ns = mean_ns;
  s.p50_ns = mean_ns;
  s.p90_ns = 2 * mean_ns;
  s.p99_ns = 4 * mean_ns;
  it.stats = s;
  return it;
}

CallSiteStats site(const std::string& caller, double mean_ns, double rate, uint64_t count = 100) {
  CallSiteStats c;
  c.caller = caller;
  c.count = count;
  c.mean_ns = mean_ns;
  c.caller_rate_per_s = rate;
  return c;
}

bool anyContains(const std::vector<std::string>& v, const std::string& needle) {
  for (const auto& s : v)
    if (s.find(needle) != std::string::npos) return true;
  return false;
}

// Paper task T4: a getter with production data, newly called inside two nested loops.
TEST(InferenceTest, T4GetterInNestedLoopsMultipliesIterations) {
  TestTU t;
  t.code = R"cc(
struct Backlog { int hours(int task) const; };
int estimate(const Backlog& b) {
  int total = 0;
  for (int i = 0; i < 10; ++i) {
    for (int j = 0; j < 20; ++j) {
      total += b.hours(j);
    }
  }
  return total;
}
)cc";
  FeedbackItem getter = item("Backlog::hours(int) const", 2 * kMs);
  getter.callsites = {site("report()", 2 * kMs, 3)};  // measured in another parent only
  InMemoryFeedback view({item("estimate(const Backlog &)", 5 * kMs), getter});
  SnapshotPtr s = t.analyze(view);
  const FunctionInfo* f = findFunction(*s, "estimate(const Backlog &)");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->match, "exact");
  auto calls = nodesOfKind(*f, NodeKind::Call);
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0]->estimate.provenance, Provenance::Inferred);
  EXPECT_DOUBLE_EQ(calls[0]->estimate.dist.mean_ns, 2 * kMs);
  EXPECT_EQ(calls[0]->estimate.derivation.model, "callsite-regression");
  ASSERT_TRUE(calls[0]->measured);  // the callee's stats, for the hover
  auto loops = nodesOfKind(*f, NodeKind::Loop);
  ASSERT_EQ(loops.size(), 2u);
  EXPECT_EQ(loops[1]->iteration_source, IterationSource::ConstantTrip);
  EXPECT_DOUBLE_EQ(loops[1]->estimate.dist.mean_ns, 20 * 2 * kMs);
  EXPECT_DOUBLE_EQ(loops[0]->estimate.dist.mean_ns, 10 * 20 * 2 * kMs);
  EXPECT_EQ(loops[0]->estimate.derivation.summary, "10 × 40.0 ms");
  // Function total = measured + outer × inner × callee time.
  EXPECT_TRUE(f->changed);
  EXPECT_EQ(f->root().estimate.provenance, Provenance::Inferred);
  EXPECT_DOUBLE_EQ(f->root().estimate.dist.mean_ns, 5 * kMs + 10 * 20 * 2 * kMs);
  ASSERT_TRUE(f->root().measured);
  EXPECT_DOUBLE_EQ(f->root().measured->mean_ns, 5 * kMs);
  EXPECT_TRUE(anyContains(f->root().estimate.derivation.inputs, "10 × 20 × 2.00 ms"));
}

TEST(InferenceTest, ExistingCallSiteIsMeasuredAndFunctionUnchanged) {
  TestTU t;
  t.code = R"cc(
struct Backlog { int hours(int task) const; };
int estimate(const Backlog& b) {
  int total = 0;
  for (int j = 0; j < 20; ++j) total += b.hours(j);
  return total;
}
)cc";
  FeedbackItem getter = item("Backlog::hours(int) const", 2 * kMs);
  getter.callsites = {site("estimate(const Backlog &)", 1.5 * kMs, 3)};
  FeedbackItem self = item("estimate(const Backlog &)", 31 * kMs);
  self.loops = {LoopStats{0, 5, 18, 30, 100}};
  InMemoryFeedback view({self, getter});
  SnapshotPtr s = t.analyze(view);
  const FunctionInfo* f = findFunction(*s, "estimate(const Backlog &)");
  ASSERT_NE(f, nullptr);
  auto call = nodesOfKind(*f, NodeKind::Call)[0];
  EXPECT_EQ(call->estimate.provenance, Provenance::Measured);
  EXPECT_DOUBLE_EQ(call->estimate.dist.mean_ns, 1.5 * kMs);
  auto loop = nodesOfKind(*f, NodeKind::Loop)[0];
  EXPECT_EQ(loop->iteration_source, IterationSource::Production);  // beats the trip count
  EXPECT_DOUBLE_EQ(*loop->iterations, 18);
  EXPECT_EQ(loop->estimate.provenance, Provenance::Measured);
  EXPECT_FALSE(f->changed);
  EXPECT_EQ(f->root().estimate.provenance, Provenance::Measured);
  EXPECT_DOUBLE_EQ(f->root().estimate.dist.mean_ns, 31 * kMs);
}

TEST(InferenceTest, CallSiteRegressionPredictsForThisParentsWorkload) {
  TestTU t;
  t.code = R"cc(
struct Db { int query(int) const; };
int handler(const Db& d) { return d.query(1); }
int fresh(const Db& d) { return d.query(2); }
)cc";
  FeedbackItem q = item("Db::query(int) const", 20 * kMs);
  q.callsites = {site("a()", 10 * kMs, 1), site("b()", 20 * kMs, 2), site("c()", 30 * kMs, 3)};
  FeedbackItem h = item("handler(const Db &)", 1 * kMs);
  h.stats->rate_per_s = 2.5;
  InMemoryFeedback view({q, h});
  SnapshotPtr s = t.analyze(view);
  const Node* call = nodesOfKind(*findFunction(*s, "handler(const Db &)"), NodeKind::Call)[0];
  EXPECT_EQ(call->estimate.derivation.model, "callsite-regression");
  EXPECT_NEAR(call->estimate.dist.mean_ns, 25 * kMs, 1);
  EXPECT_NEAR(call->estimate.dist.p99_ns, 4 * 20 * kMs * 1.25, 1);  // callee shape, rescaled
  EXPECT_EQ(call->estimate.dist.samples, 300u);
  // A parent without workload data: predicted at the call sites' mean workload, and said so.
  const Node* other = nodesOfKind(*findFunction(*s, "fresh(const Db &)"), NodeKind::Call)[0];
  EXPECT_NEAR(other->estimate.dist.mean_ns, 20 * kMs, 1);
  EXPECT_TRUE(anyContains(other->estimate.derivation.assumptions, "workload of fresh() unknown"));
}

TEST(InferenceTest, CalleeOverallWhenCallSitesCarryNoWorkload) {
  TestTU t;
  t.code = "int slow(int);\nint f() { return slow(1); }\n";
  FeedbackItem q = item("slow(int)", 7 * kMs);
  q.callsites = {site("g()", 6 * kMs, 0)};
  InMemoryFeedback view({q});
  SnapshotPtr s = t.analyze(view);
  const FunctionInfo* f = findFunction(*s, "f()");
  const Node* call = nodesOfKind(*f, NodeKind::Call)[0];
  EXPECT_EQ(call->estimate.derivation.model, "callee-overall");
  EXPECT_DOUBLE_EQ(call->estimate.dist.mean_ns, 7 * kMs);
  EXPECT_DOUBLE_EQ(call->estimate.dist.p99_ns, 28 * kMs);
  // f has no data: its total is the sum of its parts, a prediction.
  EXPECT_EQ(f->root().estimate.provenance, Provenance::Inferred);
  EXPECT_EQ(f->root().estimate.derivation.model, "sum");
  EXPECT_DOUBLE_EQ(f->root().estimate.dist.mean_ns, 7 * kMs);
  EXPECT_TRUE(f->changed);
}

TEST(InferenceTest, WorkspaceBodyAnalysedRecursivelyAcrossFilesAndCycles) {
  TestTU t;
  t.headers["db.h"] = R"cc(
#pragma once
struct Db { int query(int) const; };
inline int helper(const Db& d) { return d.query(1) + d.query(2); }
)cc";
  t.code = R"cc(
#include "db.h"
int leaf();
int a(int n);
int b(int n) { return n ? a(n - 1) : leaf(); }
int a(int n) { return b(n); }
int top(const Db& d) { return helper(d); }
)cc";
  InMemoryFeedback view({item("Db::query(int) const", 10 * kMs), item("leaf()", 1 * kMs)});
  SnapshotPtr s = t.analyze(view);
  const FunctionInfo* top = findFunction(*s, "top(const Db &)");
  ASSERT_NE(top, nullptr);
  const Node* call = nodesOfKind(*top, NodeKind::Call)[0];
  EXPECT_TRUE(call->callee_in_workspace);
  EXPECT_EQ(call->estimate.derivation.model, "workspace-body");
  EXPECT_DOUBLE_EQ(call->estimate.dist.mean_ns, 20 * kMs);
  EXPECT_DOUBLE_EQ(top->root().estimate.dist.mean_ns, 20 * kMs);
  // a → b → a: the recursive edge is unknown, the rest is still inferred (no endless loop).
  const FunctionInfo* a = findFunction(*s, "a(int)");
  ASSERT_NE(a, nullptr);
  EXPECT_TRUE(a->root().estimate.known());
  EXPECT_DOUBLE_EQ(a->root().estimate.dist.mean_ns, 0.5 * kMs);  // leaf() in one of two arms
}

TEST(InferenceTest, UnknownStaysUnknownNeverZero) {
  TestTU t;
  t.code = R"cc(
struct Ext { int mystery() const; };
int u(const Ext& e) {
  int t = 0;
  for (int i = 0; i < 5; ++i) t += e.mystery();
  return t;
}
)cc";
  InMemoryFeedback view;
  SnapshotPtr s = t.analyze(view);
  const FunctionInfo* f = findFunction(*s, "u(const Ext &)");
  ASSERT_NE(f, nullptr);
  for (const Node& n : f->nodes) EXPECT_FALSE(n.estimate.known()) << n.id;
  auto loop = nodesOfKind(*f, NodeKind::Loop)[0];
  EXPECT_EQ(*loop->iterations, 5);  // still known, for the hint `5 × ?`
  EXPECT_EQ(loop->estimate.derivation.summary, "5 × ?");
  EXPECT_FALSE(f->changed);
  EXPECT_EQ(f->match, "");
}

TEST(InferenceTest, LeafBodiesAreNegligibleSoLoopsOverThemStayKnown) {
  // Trivial accessors in the workspace have no production data; their bodies make no calls.
  // They are predicted as negligible (stated), so the loop total is the measured call's cost,
  // and calling them does not make the function "changed".
  TestTU t;
  t.code = R"cc(
    struct Task {
      int state_ = 0;
      int state() const { return state_; }
    };
    struct Story {
      Task* begin() const;
      Task* end() const;
    };
    struct Repo {
      Story load(int id) const;
    };
    int done(const Repo& r) {
      int n = 0;
      for (int i = 0; i < 4; ++i) {
        Story s = r.load(i);
        for (const Task& t : s) n += t.state();
      }
      return n;
    }
  )cc";
  FeedbackItem load = item("Repo::load(int) const", 3 * kMs);
  load.callsites = {site("done(const Repo &)", 3 * kMs, 2)};
  InMemoryFeedback view({item("done(const Repo &)", 12 * kMs), load});
  SnapshotPtr s = t.analyze(view);
  const FunctionInfo* f = findFunction(*s, "done(const Repo &)");
  ASSERT_NE(f, nullptr);
  const Node* state = nullptr;
  for (const Node* c : nodesOfKind(*f, NodeKind::Call))
    if (c->callee_key == "Task::state() const") state = c;
  ASSERT_NE(state, nullptr);
  EXPECT_EQ(state->estimate.provenance, Provenance::Inferred);
  EXPECT_DOUBLE_EQ(state->estimate.dist.mean_ns, 0);
  EXPECT_TRUE(anyContains(state->estimate.derivation.assumptions, "negligible"));
  auto loops = nodesOfKind(*f, NodeKind::Loop);
  ASSERT_EQ(loops.size(), 2u);
  EXPECT_TRUE(loops[0]->estimate.known());
  EXPECT_DOUBLE_EQ(loops[0]->estimate.dist.mean_ns, 4 * 3 * kMs);
  EXPECT_FALSE(f->changed);
  EXPECT_EQ(f->root().estimate.provenance, Provenance::Measured);
}

TEST(InferenceTest, LoopIterationSourcesInOrderOfPreference) {
  TestTU t;
  t.code = R"cc(
struct List { int* begin() const; int* end() const; };
struct Svc { int load(int) const; List tasks() const; };
int iter(const Svc& s, int n) {
  int t = 0;
  for (int i = 0; i < 100; ++i) t += s.load(i);
  for (int x : s.tasks()) t += s.load(x);
  // perfhat: iterations=7
  for (int i = 0; i < 3; ++i) t += s.load(i);
  while (n-- > 0) t += s.load(n);  // perfhat: iterations=7
  while (n++ < 1000) t += s.load(n);
  return t;
}
)cc";
  FeedbackItem self = item("iter(const Svc &, int)", 50 * kMs);
  self.loops = {LoopStats{0, 6, 42, 50, 10}};
  FeedbackItem tasks = item("Svc::tasks() const", 1 * kMs);
  tasks.result_size = SizeStats{17, 30, 40, 10};
  InMemoryFeedback view({self, tasks, item("Svc::load(int) const", 1 * kMs)});
  SnapshotPtr s = t.analyze(view);
  const FunctionInfo* f = findFunction(*s, "iter(const Svc &, int)");
  ASSERT_NE(f, nullptr);
  auto loops = nodesOfKind(*f, NodeKind::Loop);
  ASSERT_EQ(loops.size(), 5u);
  EXPECT_EQ(loops[0]->iteration_source, IterationSource::Production);
  EXPECT_EQ(*loops[0]->iterations, 42);
  EXPECT_EQ(loops[1]->iteration_source, IterationSource::ProducerSize);
  EXPECT_EQ(*loops[1]->iterations, 17);
  // Once-evaluated range expression + per-iteration body.
  EXPECT_DOUBLE_EQ(loops[1]->estimate.dist.mean_ns, 1 * kMs + 17 * 1 * kMs);
  EXPECT_EQ(loops[2]->iteration_source, IterationSource::ConstantTrip);
  EXPECT_EQ(*loops[2]->iterations, 3);
  EXPECT_EQ(loops[3]->iteration_source, IterationSource::Annotation);
  EXPECT_EQ(*loops[3]->iterations, 7);
  EXPECT_EQ(loops[4]->iteration_source, IterationSource::Default);
  EXPECT_EQ(*loops[4]->iterations, 10);
  EXPECT_TRUE(anyContains(loops[4]->estimate.derivation.assumptions, "default 10 iterations"));
  for (auto* l : loops) EXPECT_FALSE(l->estimate.derivation.model.empty());
}

TEST(InferenceTest, BranchesMeanOrWorstCase) {
  TestTU t;
  t.code = R"cc(
int fa();
int fb();
int br(int n) {
  int x = 0;
  if (n) x = fa(); else x = fb();
  return x;
}
)cc";
  InMemoryFeedback view({item("fa()", 2 * kMs), item("fb()", 6 * kMs)});
  auto built = t.build();
  AnalysisOptions mean;
  SnapshotPtr s = analyze(built->unit, view, mean);
  const FunctionInfo* f = findFunction(*s, "br(int)");
  auto branch = nodesOfKind(*f, NodeKind::Branch)[0];
  EXPECT_DOUBLE_EQ(branch->estimate.dist.mean_ns, 4 * kMs);
  EXPECT_EQ(*branch->branch_probability, 0.5);
  EXPECT_TRUE(anyContains(branch->estimate.derivation.assumptions, "equally likely"));
  EXPECT_DOUBLE_EQ(f->root().estimate.dist.mean_ns, 4 * kMs);
  AnalysisOptions worst;
  worst.branch_mode = BranchMode::Worst;
  s = analyze(built->unit, view, worst);
  f = findFunction(*s, "br(int)");
  EXPECT_DOUBLE_EQ(nodesOfKind(*f, NodeKind::Branch)[0]->estimate.dist.mean_ns, 6 * kMs);
}

TEST(InferenceTest, MatchingLayersOnRealDefinitions) {
  TestTU t;
  t.code = R"cc(
namespace api {
struct Api {
  int listTasks(int page) const;
  int load(int) const;
  int load(double) const;
};
int Api::listTasks(int page) const { return page; }
int Api::load(int) const { return 1; }
int Api::load(double) const { return 2; }
int byLine() { return 3; }
int byMangled() { return 4; }
}  // namespace api
)cc";
  FeedbackItem line = item("GET /by-line", 4 * kMs);
  line.file = "main.cc";
  line.line = 11;  // 1-based: `int byLine()`
  FeedbackItem mangled = item("renamed::byMangled()", 1 * kMs);
  mangled.mangled = "_ZN3api9byMangledEv";
  InMemoryFeedback view({item("GET /tasks", 3 * kMs), item("api::Api::load(long) const", 1 * kMs),
                         item("api::Api::load(char) const", 1 * kMs), line, mangled});
  t.options.rules = {{"GET /tasks", "api::Api::listTasks(...)", ""}};
  SnapshotPtr s = t.analyze(view);
  EXPECT_EQ(findFunction(*s, "api::Api::listTasks(int) const")->match, "rule");
  EXPECT_EQ(findFunction(*s, "api::Api::load(int) const")->match, "overloads");
  EXPECT_TRUE(anyContains(findFunction(*s, "api::Api::load(int) const")
                              ->root()
                              .estimate.derivation.assumptions,
                          "aggregated"));
  EXPECT_EQ(findFunction(*s, "api::byLine()")->match, "file-line");
  EXPECT_EQ(findFunction(*s, "api::byMangled()")->match, "mangled");
  EXPECT_GT(s->analysis_ms, 0);
  EXPECT_GT(s->parse_ms, 0);
}

TEST(InferenceTest, ParseErrorsReachTheSnapshot) {
  TestTU t;
  t.code = "int f() { return g(); }\n";
  InMemoryFeedback view;
  SnapshotPtr s = t.analyze(view);
  ASSERT_FALSE(s->problems.empty());
  EXPECT_THAT(s->problems[0].message, HasSubstr("'g'"));
  ASSERT_EQ(s->functions.size(), 1u);
  EXPECT_FALSE(s->functions[0].root().estimate.known());
}

TEST(FormatDurationTest, Units) {
  EXPECT_EQ(formatDuration(120), "120 ns");
  EXPECT_EQ(formatDuration(850e3), "850 µs");
  EXPECT_EQ(formatDuration(12.4e6), "12.4 ms");
  EXPECT_EQ(formatDuration(1.24e9), "1.24 s");
}

}  // namespace
}  // namespace perfhat::analysis
