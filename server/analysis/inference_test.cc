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

using ::testing::Contains;
using testing::findFunction;
using ::testing::HasSubstr;
using testing::nodesOfKind;
using testing::TestTU;

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

namespace fact = analysis::fact;

// The changed-call input of `callee` ("new call f(): 10 × 2 ms"), or nullptr.
const fact::ChangedCall* changedCall(const analysis::Derivation& d, fact::CallChange change,
                                     const std::string& callee) {
  for (const fact::Input& in : d.inputs)
    if (const auto* c = std::get_if<fact::ChangedCall>(&in.fact))
      if (c->change == change && c->callee == callee) return c;
  return nullptr;
}

// Paper task T4: a getter with production data, newly called inside two nested loops.
TEST(InferenceTest, T4GetterInNestedLoopsMultipliesIterations) {
  TestTU t;
  t.code = R"src(
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
)src";
  FeedbackItem getter = item("Backlog::hours(int) const", 2 * kMs);
  getter.callsites = {site("report()", 2 * kMs, 3)};  // measured in another parent only
  InMemoryFeedback view({item("estimate(const Backlog &)", 5 * kMs), getter});
  SnapshotPtr s = t.analyze(view);
  const FunctionInfo* f = findFunction(*s, "estimate(const Backlog &)");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->match, analysis::MatchKind::Exact);
  auto calls = nodesOfKind(*f, NodeKind::Call);
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0]->estimate.provenance, Provenance::Inferred);
  EXPECT_DOUBLE_EQ(calls[0]->estimate.dist.mean_ns, 2 * kMs);
  EXPECT_EQ(calls[0]->estimate.derivation.model, analysis::Model::CallsiteRegression);
  ASSERT_TRUE(calls[0]->measured);  // the callee's stats, for the hover
  auto loops = nodesOfKind(*f, NodeKind::Loop);
  ASSERT_EQ(loops.size(), 2u);
  EXPECT_EQ(loops[1]->iteration_source, IterationSource::ConstantTrip);
  EXPECT_DOUBLE_EQ(loops[1]->estimate.dist.mean_ns, 20 * 2 * kMs);
  EXPECT_DOUBLE_EQ(loops[0]->estimate.dist.mean_ns, 10 * 20 * 2 * kMs);
  const auto* product = std::get_if<fact::LoopProduct>(&loops[0]->estimate.derivation.summary);
  ASSERT_NE(product, nullptr);
  EXPECT_EQ(product->iterations, 10);
  EXPECT_DOUBLE_EQ(product->body_ns, 40 * kMs);
  // Function total = measured + outer × inner × callee time.
  EXPECT_TRUE(f->changed);
  EXPECT_EQ(f->root().estimate.provenance, Provenance::Inferred);
  EXPECT_DOUBLE_EQ(f->root().estimate.dist.mean_ns, 5 * kMs + 10 * 20 * 2 * kMs);
  ASSERT_TRUE(f->root().measured);
  EXPECT_DOUBLE_EQ(f->root().measured->mean_ns, 5 * kMs);
  const fact::ChangedCall* added =
      changedCall(f->root().estimate.derivation, fact::CallChange::New, "hours()");
  ASSERT_NE(added, nullptr);
  EXPECT_THAT(added->factors, ::testing::ElementsAre(10, 20));
  EXPECT_DOUBLE_EQ(added->per_execution_ns, 2 * kMs);
}

TEST(InferenceTest, ExistingCallSiteIsMeasuredAndFunctionUnchanged) {
  TestTU t;
  t.code = R"src(
struct Backlog { int hours(int task) const; };
int estimate(const Backlog& b) {
  int total = 0;
  for (int j = 0; j < 20; ++j) total += b.hours(j);
  return total;
}
)src";
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
  t.code = R"src(
struct Db { int query(int) const; };
int handler(const Db& d) { return d.query(1); }
int fresh(const Db& d) { return d.query(2); }
)src";
  FeedbackItem q = item("Db::query(int) const", 20 * kMs);
  q.callsites = {site("a()", 10 * kMs, 1), site("b()", 20 * kMs, 2), site("c()", 30 * kMs, 3)};
  FeedbackItem h = item("handler(const Db &)", 1 * kMs);
  h.stats->rate_per_s = 2.5;
  InMemoryFeedback view({q, h});
  SnapshotPtr s = t.analyze(view);
  const Node* call = nodesOfKind(*findFunction(*s, "handler(const Db &)"), NodeKind::Call)[0];
  EXPECT_EQ(call->estimate.derivation.model, analysis::Model::CallsiteRegression);
  EXPECT_NEAR(call->estimate.dist.mean_ns, 25 * kMs, 1);
  EXPECT_NEAR(call->estimate.dist.p99_ns, 4 * 20 * kMs * 1.25, 1);  // callee shape, rescaled
  EXPECT_EQ(call->estimate.dist.samples, 300u);
  // A parent without workload data: predicted at the call sites' mean workload, and said so.
  const Node* other = nodesOfKind(*findFunction(*s, "fresh(const Db &)"), NodeKind::Call)[0];
  EXPECT_NEAR(other->estimate.dist.mean_ns, 20 * kMs, 1);
  const auto* unknown_workload = other->estimate.derivation.assumption<fact::WorkloadUnknown>();
  ASSERT_NE(unknown_workload, nullptr);
  EXPECT_EQ(unknown_workload->caller, "fresh");
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
  EXPECT_EQ(call->estimate.derivation.model, analysis::Model::CalleeOverall);
  EXPECT_DOUBLE_EQ(call->estimate.dist.mean_ns, 7 * kMs);
  EXPECT_DOUBLE_EQ(call->estimate.dist.p99_ns, 28 * kMs);
  // f has no data: its total is the sum of its parts, a prediction.
  EXPECT_EQ(f->root().estimate.provenance, Provenance::Inferred);
  EXPECT_EQ(f->root().estimate.derivation.model, analysis::Model::Sum);
  EXPECT_DOUBLE_EQ(f->root().estimate.dist.mean_ns, 7 * kMs);
  EXPECT_TRUE(f->changed);
}

TEST(InferenceTest, WorkspaceBodyAnalysedRecursivelyAcrossFilesAndCycles) {
  TestTU t;
  t.headers["db.h"] = R"src(
#pragma once
struct Db { int query(int) const; };
inline int helper(const Db& d) { return d.query(1) + d.query(2); }
)src";
  t.code = R"src(
#include "db.h"
int leaf();
int a(int n);
int b(int n) { return n ? a(n - 1) : leaf(); }
int a(int n) { return b(n); }
int top(const Db& d) { return helper(d); }
)src";
  InMemoryFeedback view({item("Db::query(int) const", 10 * kMs), item("leaf()", 1 * kMs)});
  SnapshotPtr s = t.analyze(view);
  const FunctionInfo* top = findFunction(*s, "top(const Db &)");
  ASSERT_NE(top, nullptr);
  const Node* call = nodesOfKind(*top, NodeKind::Call)[0];
  EXPECT_TRUE(call->callee_in_workspace);
  EXPECT_EQ(call->estimate.derivation.model, analysis::Model::WorkspaceBody);
  EXPECT_DOUBLE_EQ(call->estimate.dist.mean_ns, 20 * kMs);
  EXPECT_DOUBLE_EQ(top->root().estimate.dist.mean_ns, 20 * kMs);
  // a → b → a: the recursive edge is unknown, the rest is still inferred (no endless loop).
  const FunctionInfo* a = findFunction(*s, "a(int)");
  ASSERT_NE(a, nullptr);
  EXPECT_TRUE(a->root().estimate.known());
  // leaf() in the `n == 0` arm, unlikely by the zero heuristic (n != 0 taken 20:12).
  EXPECT_DOUBLE_EQ(a->root().estimate.dist.mean_ns, 0.375 * kMs);
}

TEST(InferenceTest, UnknownStaysUnknownNeverZero) {
  TestTU t;
  t.code = R"src(
struct Ext { int mystery() const; };
int u(const Ext& e) {
  int t = 0;
  for (int i = 0; i < 5; ++i) t += e.mystery();
  return t;
}
)src";
  InMemoryFeedback view;
  SnapshotPtr s = t.analyze(view);
  const FunctionInfo* f = findFunction(*s, "u(const Ext &)");
  ASSERT_NE(f, nullptr);
  for (const Node& n : f->nodes) EXPECT_FALSE(n.estimate.known()) << n.id;
  auto loop = nodesOfKind(*f, NodeKind::Loop)[0];
  EXPECT_EQ(*loop->iterations, 5);  // still known, for the hint `5 × ?`
  const auto* product = std::get_if<fact::LoopProduct>(&loop->estimate.derivation.summary);
  ASSERT_NE(product, nullptr);
  EXPECT_EQ(product->iterations, 5);
  EXPECT_EQ(product->body, fact::LoopProduct::Body::Unknown);
  EXPECT_FALSE(f->changed);
  EXPECT_EQ(f->match, analysis::MatchKind::None);
}

TEST(InferenceTest, LeafBodiesAreNegligibleSoLoopsOverThemStayKnown) {
  // Trivial accessors in the workspace have no production data; their bodies make no calls.
  // They have no figure ("no data", never "0 ns") but are taken as negligible (stated), so the
  // loop total is the measured call's cost, and calling them does not make the function
  // "changed". A loop over them with an assumed count is unknown: its count could be anything.
  TestTU t;
  t.code = R"src(
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
  )src";
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
  EXPECT_FALSE(state->estimate.known());
  EXPECT_EQ(state->estimate.derivation.model, analysis::Model::Leaf);
  EXPECT_NE(state->estimate.derivation.assumption<fact::NegligibleBody>(), nullptr);
  auto loops = nodesOfKind(*f, NodeKind::Loop);
  ASSERT_EQ(loops.size(), 2u);
  EXPECT_TRUE(loops[0]->estimate.known());
  EXPECT_DOUBLE_EQ(loops[0]->estimate.dist.mean_ns, 4 * 3 * kMs);
  EXPECT_FALSE(loops[1]->estimate.known());  // default count × negligible body
  EXPECT_EQ(loops[0]->estimate.unknown_parts, 1);
  const FunctionInfo* state_fn = findFunction(*s, "Task::state() const");
  ASSERT_NE(state_fn, nullptr);
  EXPECT_FALSE(state_fn->root().estimate.known());
  EXPECT_FALSE(f->changed);
  EXPECT_EQ(f->root().estimate.provenance, Provenance::Measured);
}

TEST(InferenceTest, LoopIterationSourcesInOrderOfPreference) {
  TestTU t;
  t.code = R"src(
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
)src";
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
  const auto* assumed = loops[4]->estimate.derivation.assumption<fact::DefaultIterations>();
  ASSERT_NE(assumed, nullptr);
  EXPECT_EQ(assumed->n, 10);
  for (auto* l : loops) EXPECT_NE(l->estimate.derivation.model, analysis::Model::Unstated);
}

// Without branch counts a two-arm branch is weighted by the static prior of its condition
// (stated as an assumption); the worst case ignores priors.
TEST(InferenceTest, BranchPriorsWeighArmsUnlessWorstCase) {
  TestTU t;
  t.code = R"src(
    struct T {};
    T* find();
    int fa();
    int fb();
    int pr() {
      T* p = find();
      int x = 0;
      if (p)
        x = fa();
      else
        x = fb();
      return x;
    }
    int guard() {
      int x = 0;
      for (int i = 0; i < 10; ++i) {
        if (i != 0) continue;
        x += fa();
      }
      return x;
    }
  )src";
  InMemoryFeedback view({item("fa()", 2 * kMs), item("fb()", 6 * kMs)});
  auto built = t.build();
  SnapshotPtr s = analyze(built->unit, view, AnalysisOptions());
  const FunctionInfo* f = findFunction(*s, "pr()");
  ASSERT_NE(f, nullptr);
  const Node* branch = nodesOfKind(*f, NodeKind::Branch)[0];
  // Pointer heuristic (LLVM 20:12): 0.625 × 2 ms + 0.375 × 6 ms.
  EXPECT_DOUBLE_EQ(branch->estimate.dist.mean_ns, 3.5 * kMs);
  EXPECT_DOUBLE_EQ(*branch->branch_probability, 0.625);
  EXPECT_DOUBLE_EQ(*branch->armProbability(1), 0.375);
  const auto* prior = branch->estimate.derivation.assumption<fact::StaticPrior>();
  ASSERT_NE(prior, nullptr);
  EXPECT_THAT(prior->heuristic, ::testing::StartsWith("pointer"));
  // The continue guard `i != 0` is likely taken (opcode heuristic), so the rest of the body
  // runs in 0.375 of the 10 iterations.
  const FunctionInfo* g = findFunction(*s, "guard()");
  ASSERT_NE(g, nullptr);
  EXPECT_DOUBLE_EQ(nodesOfKind(*g, NodeKind::Loop)[0]->estimate.dist.mean_ns, 10 * 0.375 * 2 * kMs);
  AnalysisOptions worst;
  worst.branch_mode = BranchMode::Worst;
  s = analyze(built->unit, view, worst);
  f = findFunction(*s, "pr()");
  branch = nodesOfKind(*f, NodeKind::Branch)[0];
  EXPECT_DOUBLE_EQ(branch->estimate.dist.mean_ns, 6 * kMs);
  EXPECT_EQ(*branch->armProbability(1), 1.0);
  g = findFunction(*s, "guard()");
  EXPECT_DOUBLE_EQ(nodesOfKind(*g, NodeKind::Loop)[0]->estimate.dist.mean_ns, 10 * 2 * kMs);
}

TEST(InferenceTest, BranchesMeanOrWorstCase) {
  TestTU t;
  t.code = R"src(
int fa();
int fb();
int br(bool n) {
  int x = 0;
  if (n) x = fa(); else x = fb();
  return x;
}
)src";
  InMemoryFeedback view({item("fa()", 2 * kMs), item("fb()", 6 * kMs)});
  auto built = t.build();
  AnalysisOptions mean;
  SnapshotPtr s = analyze(built->unit, view, mean);
  const FunctionInfo* f = findFunction(*s, "br(bool)");
  auto branch = nodesOfKind(*f, NodeKind::Branch)[0];
  EXPECT_DOUBLE_EQ(branch->estimate.dist.mean_ns, 4 * kMs);
  EXPECT_EQ(*branch->branch_probability, 0.5);
  EXPECT_NE(branch->estimate.derivation.assumption<fact::EqualArms>(), nullptr);
  EXPECT_DOUBLE_EQ(f->root().estimate.dist.mean_ns, 4 * kMs);
  AnalysisOptions worst;
  worst.branch_mode = BranchMode::Worst;
  s = analyze(built->unit, view, worst);
  f = findFunction(*s, "br(bool)");
  EXPECT_DOUBLE_EQ(nodesOfKind(*f, NodeKind::Branch)[0]->estimate.dist.mean_ns, 6 * kMs);
}

// `if (…) continue;` skips the rest of the body: what follows it is the guard's "not taken" arm,
// weighted like any arm (no branch data: the stated equal-arms assumption; worst case: always).
TEST(InferenceTest, ContinueGuardWeightsTheRestOfTheLoopBody) {
  TestTU t;
  t.code = R"src(
    struct Svc {
      int load(int) const;
      bool skip(int) const;
    };
    int scan(const Svc& s) {
      int t = 0;
      for (int i = 0; i < 10; ++i) {
        if (s.skip(i)) continue;
        t += s.load(i);
      }
      return t;
    }
  )src";
  FeedbackItem load = item("Svc::load(int) const", 2 * kMs);
  load.callsites = {site("other()", 2 * kMs, 1)};  // a new call here
  InMemoryFeedback view(
      {item("scan(const Svc &)", 1 * kMs), load, item("Svc::skip(int) const", 0)});
  auto built = t.build();
  AnalysisOptions mean;
  SnapshotPtr s = analyze(built->unit, view, mean);
  const FunctionInfo* f = findFunction(*s, "scan(const Svc &)");
  ASSERT_NE(f, nullptr);
  auto loop = nodesOfKind(*f, NodeKind::Loop)[0];
  EXPECT_DOUBLE_EQ(loop->estimate.dist.mean_ns, 10 * 0.5 * 2 * kMs);
  auto guard = nodesOfKind(*f, NodeKind::Branch)[0];
  EXPECT_NE(guard->estimate.derivation.assumption<fact::EqualArms>(), nullptr);
  // Behind a guard with an assumed weight (the stated prior, 0.5): 10 × 0.5 × 2 ms does not fit
  // in scan()'s measured 1 ms, so the call is new and adds to the measured total.
  ASSERT_EQ(f->added.size(), 1u);
  EXPECT_EQ(f->added[0].status, AddedCost::Status::New);
  EXPECT_DOUBLE_EQ(f->added[0].total.mean_ns, 10 * 0.5 * 2 * kMs);
  EXPECT_DOUBLE_EQ(f->added[0].floor_ns, 10 * 0.5 * 2 * kMs);
  EXPECT_TRUE(f->changed);
  EXPECT_DOUBLE_EQ(f->root().estimate.dist.mean_ns, 1 * kMs + 10 * 0.5 * 2 * kMs);
  const fact::ChangedCall* new_load =
      changedCall(f->root().estimate.derivation, fact::CallChange::New, "load()");
  ASSERT_NE(new_load, nullptr);
  EXPECT_THAT(new_load->factors, ::testing::ElementsAre(10, 0.5));
  AnalysisOptions worst;
  worst.branch_mode = BranchMode::Worst;
  s = analyze(built->unit, view, worst);
  f = findFunction(*s, "scan(const Svc &)");
  ASSERT_EQ(f->added.size(), 1u);
  EXPECT_DOUBLE_EQ(f->added[0].total.mean_ns, 10 * 2 * kMs);
}

// Only a bare `continue` directly in a loop body is a guard; what follows it in that body (not
// after the loop) becomes its arm 1.
TEST(InferenceTest, OnlyABareContinueInALoopBodyIsAGuard) {
  TestTU t;
  t.code = R"src(
    int a(int);
    int b(int);
    int c(int);
    int d(int);
    int e(int);
    int g(int);
    int h(int n) {
      int t = 0;
      if (n) return 0;
      t += g(n);
      for (int i = 0; i < n; ++i) {
        if (a(i)) {
          t += a(i);
          continue;
        }
        t += b(i);
        if (c(i)) {
          continue;
        }
        if (c(i + 2))
          continue;
        else
          t += d(i);
        t += e(i);
      }
      for (int i = 0; i < n; ++i)
        if (a(i)) continue;
      t += g(n);
      return t;
    }
  )src";
  auto built = t.build();
  const FunctionInfo* fn = findFunction(built->unit, "h(int)");
  ASSERT_NE(fn, nullptr);
  auto parentOf = [&](const std::string& key, int nth = 0) -> const Node* {
    for (const Node* n : nodesOfKind(*fn, NodeKind::Call))
      if (n->callee_key == key && nth-- == 0) return &fn->nodes[n->parent];
    return nullptr;
  };
  auto loops = nodesOfKind(*fn, NodeKind::Loop);
  ASSERT_EQ(loops.size(), 2u);
  EXPECT_EQ(parentOf("g(int)", 0)->kind, NodeKind::Function);  // `return` guards: not loops
  EXPECT_EQ(parentOf("b(int)"), loops[0]);                     // the first `if` does work
  const Node* guard = parentOf("e(int)");
  ASSERT_NE(guard, nullptr);
  EXPECT_EQ(guard->kind, NodeKind::Branch);
  EXPECT_EQ(fn->nodes[guard->parent].id, loops[0]->id);
  EXPECT_EQ(parentOf("c(int)", 0), guard);  // the guard's own condition
  // The `if … else` after the guard is in the guard's arm 1, and is no guard itself.
  const Node* if_else = parentOf("d(int)");
  ASSERT_NE(if_else, nullptr);
  EXPECT_EQ(if_else->parent, guard->id);
  EXPECT_EQ(if_else->arm, 1);
  for (const Node* n : nodesOfKind(*fn, NodeKind::Call)) {
    if (n->callee_key == "e(int)") {
      EXPECT_EQ(n->arm, 1);
    }
  }
  // A guard that is a loop's whole body takes nothing after the loop.
  EXPECT_EQ(parentOf("g(int)", 1)->kind, NodeKind::Function);
}

// A new call beside a measured one runs as often as that call does in production (its calls
// per call of the function), which accounts for the real trip count, early returns and guards
// better than the collection's size over every caller.
TEST(InferenceTest, NewCallRunsAsOftenAsAMeasuredCallInItsBlock) {
  TestTU t;
  t.code = R"src(
    struct List {
      int* begin() const;
      int* end() const;
    };
    struct Svc {
      List items(int) const;
      int name(int) const;
      int cost(int) const;
    };
    int page(const Svc& s) {
      int t = 0;
      for (int x : s.items(1)) {
        t += s.name(x);
        t += s.cost(x);
      }
      return t;
    }
  )src";
  FeedbackItem items = item("Svc::items(int) const", 1 * kMs);
  items.result_size = SizeStats{30, 40, 50, 10};  // over every caller
  items.callsites = {site("page(const Svc &)", 1 * kMs, 1)};
  FeedbackItem name = item("Svc::name(int) const", 0.1 * kMs);
  name.callsites = {site("page(const Svc &)", 0.1 * kMs, 1)};
  name.callsites[0].calls_per_parent = 12;  // this page's lists hold 12 on average
  FeedbackItem cost = item("Svc::cost(int) const", 2 * kMs);
  cost.callsites = {site("other()", 2 * kMs, 1)};
  InMemoryFeedback view({item("page(const Svc &)", 3 * kMs), items, name, cost});
  SnapshotPtr s = t.analyze(view);
  const FunctionInfo* f = findFunction(*s, "page(const Svc &)");
  ASSERT_NE(f, nullptr);
  EXPECT_TRUE(f->changed);
  EXPECT_DOUBLE_EQ(f->root().estimate.dist.mean_ns, 3 * kMs + 12 * 2 * kMs);
  const fact::ChangedCall* new_cost =
      changedCall(f->root().estimate.derivation, fact::CallChange::New, "cost()");
  ASSERT_NE(new_cost, nullptr);
  EXPECT_THAT(new_cost->factors, ::testing::ElementsAre(12));
  // Without the count the loop's iterations (the producer's size) are used.
  name.callsites[0].calls_per_parent = 0;
  s = t.analyze(InMemoryFeedback({item("page(const Svc &)", 3 * kMs), items, name, cost}));
  f = findFunction(*s, "page(const Svc &)");
  EXPECT_DOUBLE_EQ(f->root().estimate.dist.mean_ns, 3 * kMs + 30 * 2 * kMs);
}

// A call added inside a loop beside an existing call of the same callee matches the existing
// call site's data; production's calls per call of the function tell the new executions apart.
TEST(InferenceTest, ExtraCallsOfAnAlreadyCalledCalleeAreNewCost) {
  TestTU t;
  t.code = R"src(
    struct List {
      int* begin() const;
      int* end() const;
    };
    struct Svc {
      List items(int) const;
      int refresh(int) const;
    };
    int view(const Svc& s) {
      int t = s.refresh(0);
      for (int x : s.items(1)) {
        t += s.refresh(x);
      }
      return t;
    }
  )src";
  FeedbackItem items = item("Svc::items(int) const", 1 * kMs);
  items.result_size = SizeStats{20, 30, 40, 10};
  FeedbackItem refresh = item("Svc::refresh(int) const", 2 * kMs);
  refresh.callsites = {site("view(const Svc &)", 2 * kMs, 1)};
  refresh.callsites[0].calls_per_parent = 1;  // production: the call before the loop only
  SnapshotPtr s = t.analyze(InMemoryFeedback({item("view(const Svc &)", 4 * kMs), items, refresh}));
  const FunctionInfo* f = findFunction(*s, "view(const Svc &)");
  ASSERT_NE(f, nullptr);
  EXPECT_TRUE(f->changed);
  EXPECT_DOUBLE_EQ(f->root().estimate.dist.mean_ns, 4 * kMs + 20 * 2 * kMs);  // 21 vs 1 seen
  EXPECT_NE(changedCall(f->root().estimate.derivation, fact::CallChange::MoreCalls, "refresh()"),
            nullptr);
  // Production already saw the calls in the loop: nothing new.
  refresh.callsites[0].calls_per_parent = 19;
  s = t.analyze(InMemoryFeedback({item("view(const Svc &)", 4 * kMs), items, refresh}));
  f = findFunction(*s, "view(const Svc &)");
  EXPECT_FALSE(f->changed);
  EXPECT_DOUBLE_EQ(f->root().estimate.dist.mean_ns, 4 * kMs);
}

// A regression through as many sites as it has parameters explains nothing: the call sites'
// mean is used. A good fit is used, but never extrapolated beyond the observed workloads.
TEST(InferenceTest, CallSiteRegressionShrinksWeakFitsAndDoesNotExtrapolate) {
  TestTU t;
  t.code = R"src(
    struct Db {
      int query(int) const;
    };
    int handler(const Db& d) { return d.query(1); }
  )src";
  FeedbackItem h = item("handler(const Db &)", 1 * kMs);
  h.stats->rate_per_s = 10;  // far above every observed caller
  FeedbackItem q = item("Db::query(int) const", 20 * kMs);
  q.callsites = {site("a()", 10 * kMs, 1), site("b()", 30 * kMs, 3)};
  SnapshotPtr s = t.analyze(InMemoryFeedback({q, h}));
  const Node* call = nodesOfKind(*findFunction(*s, "handler(const Db &)"), NodeKind::Call)[0];
  EXPECT_EQ(call->estimate.derivation.model, analysis::Model::CallsiteRegression);
  EXPECT_NEAR(call->estimate.dist.mean_ns, 20 * kMs, 1);  // was 100 ms on the line through both
  EXPECT_NE(call->estimate.derivation.assumption<fact::WeakFit>(), nullptr);

  q.callsites = {site("a()", 10 * kMs, 1), site("b()", 20 * kMs, 2), site("c()", 30 * kMs, 3)};
  s = t.analyze(InMemoryFeedback({q, h}));
  call = nodesOfKind(*findFunction(*s, "handler(const Db &)"), NodeKind::Call)[0];
  EXPECT_NEAR(call->estimate.dist.mean_ns, 30 * kMs, 1);  // the line at rate 3, not at 10
  EXPECT_NE(call->estimate.derivation.assumption<fact::OutsideObserved>(), nullptr);

  // Noise around a flat workload: the fit explains little and is mostly the mean.
  q.callsites = {site("a()", 10 * kMs, 1), site("b()", 30 * kMs, 2), site("c()", 10 * kMs, 3),
                 site("d()", 30 * kMs, 4)};
  s = t.analyze(InMemoryFeedback({q, h}));
  call = nodesOfKind(*findFunction(*s, "handler(const Db &)"), NodeKind::Call)[0];
  EXPECT_NEAR(call->estimate.dist.mean_ns, 20 * kMs, 0.5 * kMs);
}

TEST(InferenceTest, MatchingLayersOnRealDefinitions) {
  TestTU t;
  t.code = R"src(
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
)src";
  FeedbackItem line = item("GET /by-line", 4 * kMs);
  line.file = "main.cc";
  line.line = 11;  // 1-based: `int byLine()`
  FeedbackItem mangled = item("renamed::byMangled()", 1 * kMs);
  mangled.mangled = "_ZN3api9byMangledEv";
  InMemoryFeedback view({item("GET /tasks", 3 * kMs), item("api::Api::load(long) const", 1 * kMs),
                         item("api::Api::load(char) const", 1 * kMs), line, mangled});
  t.options.rules = {{"GET /tasks", "api::Api::listTasks(...)", ""}};
  SnapshotPtr s = t.analyze(view);
  EXPECT_EQ(findFunction(*s, "api::Api::listTasks(int) const")->match, analysis::MatchKind::Rule);
  EXPECT_EQ(findFunction(*s, "api::Api::load(int) const")->match, analysis::MatchKind::Overloads);
  EXPECT_NE(findFunction(*s, "api::Api::load(int) const")
                ->root()
                .estimate.derivation.assumption<fact::Aggregated>(),
            nullptr);
  EXPECT_EQ(findFunction(*s, "api::byLine()")->match, analysis::MatchKind::FileLine);
  EXPECT_EQ(findFunction(*s, "api::byMangled()")->match, analysis::MatchKind::Mangled);
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

}  // namespace
}  // namespace perfhat::analysis
