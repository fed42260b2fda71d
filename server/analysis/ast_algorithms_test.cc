// Calls in a lambda passed to a standard algorithm (ast_algorithms.cc): real libclang parses of
// small in-memory TUs, as in ast_builder_test.cc.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "server/analysis/ast_builder.h"
#include "server/analysis/testing/test_tu.h"

namespace perfhat::analysis {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using testing::findFunction;
using testing::keysOf;
using testing::nodesOfKind;
using ::testing::Not;
using testing::TestTU;

// An algorithm's lambda body walked as a loop of f (ast_algorithms.cc) leaves f's lambda and
// loop ordinals as GCC numbers them: its own lambdas and loops are the lambda's.
TEST(AstBuilderTest, AnAlgorithmsLambdaBodyKeepsTheFunctionsLambdaAndLoopOrdinals) {
  TestTU t;
  t.code = R"src(
#include <algorithm>
#include <vector>
int use(int);
int f(const std::vector<int>& v) {
  std::for_each(v.begin(), v.end(), [](int x) {
    auto g = [x] { return use(x); };
    g();
    for (int i = 0; i < x; ++i) use(i);
  });
  int s = 0;
  for (int x : v) s += use(x);
  return s;
}
)src";
  auto b = t.build();
  const std::string f = "f(const std::vector<int> &)";
  EXPECT_THAT(keysOf(b->unit), Contains(f + "::lambda#1"));
  EXPECT_THAT(keysOf(b->unit), Contains(f + "::lambda#1::lambda#1"));
  EXPECT_THAT(keysOf(b->unit), Not(Contains(f + "::lambda#2")));
  const FunctionInfo* fn = findFunction(b->unit, f);
  ASSERT_NE(fn, nullptr);
  std::vector<int> ordinals;
  for (const Node* l : nodesOfKind(*fn, NodeKind::Loop)) ordinals.push_back(l->loop.ordinal);
  EXPECT_THAT(ordinals, ElementsAre(-1, -1, 0));  // the algorithm's, the lambda's for, f's own
  const FunctionInfo* lambda = findFunction(b->unit, f + "::lambda#1");
  ASSERT_NE(lambda, nullptr);
  ASSERT_EQ(nodesOfKind(*lambda, NodeKind::Loop).size(), 1u);
  EXPECT_EQ(nodesOfKind(*lambda, NodeKind::Loop)[0]->loop.ordinal, 0);
}

// A capture's initialiser runs once, where the lambda is made: not per element.
TEST(AstBuilderTest, AnAlgorithmsLambdaCaptureInitialiserIsNotInItsLoop) {
  TestTU t;
  t.code = R"src(
#include <algorithm>
#include <vector>
int use(int);
int load();
void f(const std::vector<int>& v) {
  std::for_each(v.begin(), v.end(), [w = load()](int x) { use(x + w); });
}
)src";
  auto b = t.build();
  const FunctionInfo* fn = findFunction(b->unit, "f(const std::vector<int> &)");
  ASSERT_NE(fn, nullptr);
  ASSERT_EQ(nodesOfKind(*fn, NodeKind::Loop).size(), 1u);
  bool use_in_loop = false;
  for (const Node* c : nodesOfKind(*fn, NodeKind::Call)) {
    const bool in_loop = fn->nodes[c->parent].kind == NodeKind::Loop;
    if (c->call.name == "load") {
      EXPECT_FALSE(in_loop);
    }
    if (c->call.name == "use") use_in_loop = in_loop;
  }
  EXPECT_TRUE(use_in_loop);
}

// Algorithm lambdas nested deeply (hostile input): each body is walked once per enclosing
// function, not twice per level, so the walk completes and builds every level.
TEST(AstBuilderTest, DeeplyNestedAlgorithmLambdasAreBuilt) {
  constexpr int kLevels = 40;
  std::string code =
      "#include <algorithm>\n#include <vector>\nint use(int);\n"
      "void f(const std::vector<int>& v) {\n";
  for (int i = 0; i < kLevels; ++i) code += "std::for_each(v.begin(), v.end(), [&](int x) {\n";
  code += "use(x);\n";
  for (int i = 0; i < kLevels; ++i) code += "});\n";
  code += "}\n";
  TestTU t;
  t.code = code;
  auto b = t.build();
  const FunctionInfo* fn = findFunction(b->unit, "f(const std::vector<int> &)");
  ASSERT_NE(fn, nullptr);
  EXPECT_EQ(nodesOfKind(*fn, NodeKind::Loop).size(), static_cast<size_t>(kLevels));
  std::string deepest = "f(const std::vector<int> &)";
  for (int i = 0; i < kLevels; ++i) deepest += "::lambda#1";
  const FunctionInfo* last = findFunction(b->unit, deepest);
  ASSERT_NE(last, nullptr);
  EXPECT_EQ(nodesOfKind(*last, NodeKind::Call).size(), 1u);
}

}  // namespace
}  // namespace perfhat::analysis
