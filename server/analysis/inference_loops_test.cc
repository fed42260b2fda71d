// Inference of loops: where the iteration count comes from, and bodies of negligible leaves.

#include "server/analysis/inference_test_fixture.h"

namespace perfhat::analysis::inference_test {
namespace {

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
    if (c->call.key == "Task::state() const") state = c;
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
  EXPECT_EQ(loops[0]->loop.iteration_source, IterationSource::Production);
  EXPECT_EQ(*loops[0]->loop.iterations, 42);
  EXPECT_EQ(loops[1]->loop.iteration_source, IterationSource::ProducerSize);
  EXPECT_EQ(*loops[1]->loop.iterations, 17);
  // Once-evaluated range expression + per-iteration body.
  EXPECT_DOUBLE_EQ(loops[1]->estimate.dist.mean_ns, 1 * kMs + 17 * 1 * kMs);
  EXPECT_EQ(loops[2]->loop.iteration_source, IterationSource::ConstantTrip);
  EXPECT_EQ(*loops[2]->loop.iterations, 3);
  EXPECT_EQ(loops[3]->loop.iteration_source, IterationSource::Annotation);
  EXPECT_EQ(*loops[3]->loop.iterations, 7);
  EXPECT_EQ(loops[4]->loop.iteration_source, IterationSource::Default);
  EXPECT_EQ(*loops[4]->loop.iterations, 10);
  const auto* assumed = loops[4]->estimate.derivation.assumption<fact::DefaultIterations>();
  ASSERT_NE(assumed, nullptr);
  EXPECT_EQ(assumed->n, 10);
  for (auto* l : loops) EXPECT_NE(l->estimate.derivation.model, analysis::Model::Unstated);
}

}  // namespace
}  // namespace perfhat::analysis::inference_test
