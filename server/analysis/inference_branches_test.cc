// Inference of branches: static priors, mean or worst case, and `if (…) continue;` guards as
// branches whose "not taken" arm is the rest of the loop body.

#include "server/analysis/inference_test_fixture.h"

namespace perfhat::analysis::inference_test {
namespace {

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
  EXPECT_DOUBLE_EQ(*branch->branch.probability, 0.625);
  EXPECT_DOUBLE_EQ(*branch->branch.armProbability(1), 0.375);
  const auto* prior = branch->estimate.derivation.assumption<fact::StaticPrior>();
  ASSERT_NE(prior, nullptr);
  ASSERT_FALSE(prior->heuristic.heuristics.empty());
  EXPECT_EQ(prior->heuristic.heuristics[0].heuristic, BranchHeuristic::PointerNonNull);
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
  EXPECT_EQ(*branch->branch.armProbability(1), 1.0);
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
  EXPECT_EQ(*branch->branch.probability, 0.5);
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
      changedCall(f->root().estimate.derivation, fact::CallChange::New, "load");
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
      if (n->call.key == key && nth-- == 0) return &fn->nodes[n->parent];
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
    if (n->call.key == "e(int)") {
      EXPECT_EQ(n->arm, 1);
    }
  }
  // A guard that is a loop's whole body takes nothing after the loop.
  EXPECT_EQ(parentOf("g(int)", 1)->kind, NodeKind::Function);
}

}  // namespace
}  // namespace perfhat::analysis::inference_test
