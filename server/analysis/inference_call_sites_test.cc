// Inference of calls from their call sites' production data: the call-site regression and its
// fallbacks, and new calls beside measured ones (how often they run, what they add).

#include "server/analysis/inference_test_fixture.h"

namespace perfhat::analysis::inference_test {
namespace {

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
      changedCall(f->root().estimate.derivation, fact::CallChange::New, "cost");
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
  EXPECT_NE(changedCall(f->root().estimate.derivation, fact::CallChange::MoreCalls, "refresh"),
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

}  // namespace
}  // namespace perfhat::analysis::inference_test
