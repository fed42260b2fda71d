// Inference (Algorithm 1 + DESIGN §6) end to end: real libclang parses of small in-memory TUs,
// an in-memory feedback view, analyze(). Durations in nanoseconds. This file: the paper's task,
// measured and unchanged functions, workspace bodies, unknowns, matching and parse errors; call
// sites, loops and branches have files of their own (inference_*_test.cc).

#include "server/analysis/inference_test_fixture.h"

namespace perfhat::analysis::inference_test {
namespace {

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
  EXPECT_EQ(loops[1]->loop.iteration_source, IterationSource::ConstantTrip);
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
      changedCall(f->root().estimate.derivation, fact::CallChange::New, "hours");
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
  EXPECT_EQ(loop->loop.iteration_source, IterationSource::Production);  // beats the trip count
  EXPECT_DOUBLE_EQ(*loop->loop.iterations, 18);
  EXPECT_EQ(loop->estimate.provenance, Provenance::Measured);
  EXPECT_FALSE(f->changed);
  EXPECT_EQ(f->root().estimate.provenance, Provenance::Measured);
  EXPECT_DOUBLE_EQ(f->root().estimate.dist.mean_ns, 31 * kMs);
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
  EXPECT_TRUE(call->call.in_workspace);
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
  EXPECT_EQ(*loop->loop.iterations, 5);  // still known, for the hint `5 × ?`
  const auto* product = std::get_if<fact::LoopProduct>(&loop->estimate.derivation.summary);
  ASSERT_NE(product, nullptr);
  EXPECT_EQ(product->iterations, 5);
  EXPECT_EQ(product->body, fact::LoopProduct::Body::Unknown);
  EXPECT_FALSE(f->changed);
  EXPECT_EQ(f->match, analysis::MatchKind::None);
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
}  // namespace perfhat::analysis::inference_test
