// Calls through function pointers, std::function and member-function pointers (issue #18):
// production's call-site data of the calling function tells which functions ran from there that
// it does not call as written; the call node gets their sum instead of "?". Real libclang parses
// (with the real <functional>), in-memory production data.
#include <gtest/gtest.h>

#include <algorithm>

#include "common/function_key.h"
#include "server/analysis/ast_builder.h"
#include "server/analysis/indirect_calls.h"
#include "server/analysis/testing/test_tu.h"

namespace perfhat::analysis {
namespace {

using testing::findFunction;
using testing::ranFrom;
using testing::TestTU;

constexpr const char* kIndirectSource = R"src(
#include <functional>
#include <string>
namespace app {
using Handler = int (*)(int);
struct Codec {
  int encode(int x) const;
};
int twice(int x);
int apply(Handler h, int x) { return h(x) + twice(x); }
int run(const std::function<int(const std::string &)>& f) { return f("a"); }
int member(const Codec& c, int (Codec::*m)(int) const) { return (c.*m)(2); }
int viaDeref(Handler h) { return (*h)(3); }
int direct(int x) { return twice(x); }
template <typename T>
int each(T* obj, int (T::*m)(int)) { return (obj->*m)(1); }
struct Box {
  int get(int);
};
int useBox(Box* b) { return each(b, &Box::get); }
}  // namespace app
)src";

std::vector<const Node*> calls(const FunctionInfo& f) {
  return testing::nodesOfKind(f, NodeKind::Call);
}

const Node* indirectCall(const FunctionInfo& f) {
  for (const Node* n : calls(f))
    if (n->call.indirect) return n;
  return nullptr;
}

std::vector<std::string> implementationKeys(const Node& n) {
  std::vector<std::string> keys;
  for (const auto& p : n.call.implementations) keys.push_back(p.key);
  std::sort(keys.begin(), keys.end());
  return keys;
}

TEST(IndirectCallsTest, CallsThroughPointersAndStdFunctionAreMarkedWithTheirParameters) {
  TestTU t;
  t.code = kIndirectSource;
  auto built = t.build();
  const FunctionInfo* apply = findFunction(built->unit, "app::apply(int (*)(int), int)");
  ASSERT_NE(apply, nullptr);
  const Node* h = indirectCall(*apply);
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(h->call.name, "h");
  EXPECT_EQ(h->call.params, "(int)");
  EXPECT_TRUE(h->call.key.empty());
  EXPECT_EQ(calls(*apply).size(), 2u);  // h(x) and twice(x)

  const FunctionInfo* run =
      findFunction(built->unit, "app::run(const std::function<int (const std::string &)> &)");
  ASSERT_NE(run, nullptr);
  const Node* f = indirectCall(*run);
  ASSERT_NE(f, nullptr) << "std::function's operator() is a call through the object";
  EXPECT_EQ(f->call.name, "f");
  EXPECT_EQ(f->call.params, "(const std::string &)");
  EXPECT_EQ(calls(*run).size(), 1u);

  const FunctionInfo* member =
      findFunction(built->unit, "app::member(const app::Codec &, int (app::Codec::*)(int) const)");
  ASSERT_NE(member, nullptr);
  const Node* m = indirectCall(*member);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->call.params, "(int)");

  const FunctionInfo* deref = findFunction(built->unit, "app::viaDeref(int (*)(int))");
  ASSERT_NE(deref, nullptr);
  ASSERT_NE(indirectCall(*deref), nullptr);

  const FunctionInfo* direct = findFunction(built->unit, "app::direct(int)");
  ASSERT_NE(direct, nullptr);
  EXPECT_EQ(indirectCall(*direct), nullptr);

  auto keys = referencedKeys(built->unit);
  EXPECT_NE(std::find(keys.begin(), keys.end(), "callees:app::apply(int (*)(int), int)"),
            keys.end());
  EXPECT_EQ(std::find(keys.begin(), keys.end(), "callees:app::direct(int)"), keys.end());
}

TEST(IndirectCallsTest, TheCallGetsWhatRanFromItsFunctionThatItDoesNotCallAsWritten) {
  TestTU t;
  t.code = kIndirectSource;
  const std::string apply = "app::apply(int (*)(int), int)";
  InMemoryFeedback view({
      ranFrom("app::fast(int)", 200, 10, apply), ranFrom("app::slow(int)", 1000, 30, apply),
      ranFrom("app::twice(int)", 50, 40, apply),                // called as written
      ranFrom("app::Lookup::Lookup(int)", 90, 40, apply),       // a constructor: never a target
      ranFrom("app::name(const char *)", 70, 40, apply),        // parameters do not fit
      ranFrom("app::other(int)", 9000, 5, "app::elsewhere()"),  // ran from another caller
      ranFrom(apply + "::lambda#1", 80, 40, apply),  // its own lambda, run by an algorithm
  });
  SnapshotPtr snap = t.analyze(view);
  const FunctionInfo* fn = findFunction(*snap, apply);
  ASSERT_NE(fn, nullptr);
  const Node* h = indirectCall(*fn);
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(h->estimate.provenance, Provenance::Measured);
  EXPECT_NEAR(h->estimate.dist.mean_ns, (10 * 200.0 + 30 * 1000.0) / 40, 1e-6);
  EXPECT_EQ(implementationKeys(*h), (std::vector<std::string>{"app::fast(int)", "app::slow(int)"}));
}

TEST(IndirectCallsTest, AStdFunctionCallGetsTheLambdaThatRanFromIt) {
  TestTU t;
  t.code = kIndirectSource;
  const std::string run = "app::run(const std::function<int (const std::string &)> &)";
  InMemoryFeedback view({ranFrom("app::main()::lambda#1", 300, 12, run)});
  SnapshotPtr snap = t.analyze(view);
  const FunctionInfo* fn = findFunction(*snap, run);
  ASSERT_NE(fn, nullptr);
  const Node* f = indirectCall(*fn);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->estimate.provenance, Provenance::Measured);
  EXPECT_NEAR(f->estimate.dist.mean_ns, 300, 1e-6);
  EXPECT_EQ(implementationKeys(*f), (std::vector<std::string>{"app::main()::lambda#1"}));
}

// A template's definition: production's caller is an instantiation the definition matched.
TEST(IndirectCallsTest, ATemplateDefinitionTakesWhatRanFromItsInstantiations) {
  TestTU t;
  t.code = kIndirectSource;
  const std::string inst = "app::each<app::Box>(app::Box *, int (app::Box::*)(int))";
  FeedbackItem self;
  self.key = inst;
  Stats s;
  s.count = 5;
  s.mean_ns = s.p50_ns = s.p90_ns = s.p99_ns = 500;
  self.stats = s;
  InMemoryFeedback view({self, ranFrom("app::Box::get(int)", 400, 5, inst)});
  SnapshotPtr snap = t.analyze(view);
  const FunctionInfo* each = nullptr;
  for (const auto& f : snap->functions)
    if (f.key.rfind("app::each", 0) == 0) each = &f;
  ASSERT_NE(each, nullptr);
  const Node* m = indirectCall(*each);
  ASSERT_NE(m, nullptr) << each->key;
  EXPECT_EQ(m->estimate.provenance, Provenance::Measured) << each->key;
  EXPECT_EQ(implementationKeys(*m), (std::vector<std::string>{"app::Box::get(int)"}));
}

TEST(IndirectCallsTest, WithoutCallSiteDataTheCallStaysUnknownNeverZero) {
  TestTU t;
  t.code = kIndirectSource;
  const std::string apply = "app::apply(int (*)(int), int)";
  // The function is measured, its direct callee too, nothing else ran from it.
  FeedbackItem self;
  self.key = apply;
  Stats s;
  s.count = 100;
  s.mean_ns = s.p50_ns = s.p90_ns = s.p99_ns = 5000;
  self.stats = s;
  InMemoryFeedback view({self, ranFrom("app::twice(int)", 50, 100, apply),
                         ranFrom("app::other(int)", 9000, 5, "app::elsewhere()")});
  SnapshotPtr snap = t.analyze(view);
  const FunctionInfo* fn = findFunction(*snap, apply);
  ASSERT_NE(fn, nullptr);
  const Node* h = indirectCall(*fn);
  ASSERT_NE(h, nullptr);
  EXPECT_TRUE(h->call.implementations.empty());
  EXPECT_FALSE(h->estimate.known());
  EXPECT_EQ(h->estimate.dist.mean_ns, 0);
  EXPECT_TRUE(fn->added.empty()) << "no warning on unmodified code";
}

TEST(IndirectCallsTest, ParameterListOfAKey) {
  EXPECT_EQ(parameterListOf("ns::f(int, char) const"), "(int, char)");
  EXPECT_EQ(parameterListOf("ns::g<int (*)(int)>(std::vector<int> &) &&"), "(std::vector<int> &)");
  EXPECT_EQ(parameterListOf("ns::f(int)::lambda#2"), "");
  EXPECT_EQ(parameterListOf("ns::f"), "");
}

}  // namespace
}  // namespace perfhat::analysis
