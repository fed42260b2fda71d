// Functions real C++ runs that have no definition of their own in the source, or one the walk
// used to fold into another: compiler-defined special members (attached to their class), members
// of classes declared inside functions, and templates' definitions with the instantiations that
// ran (issue #18). Real libclang parses, analysed against in-memory production data.
#include <gtest/gtest.h>

#include <algorithm>

#include "server/analysis/ast_builder.h"
#include "server/analysis/testing/test_tu.h"

namespace perfhat::analysis {
namespace {

using testing::findFunction;
using testing::TestTU;

FeedbackItem measured(const std::string& key, double mean_ns, uint64_t count) {
  FeedbackItem it;
  it.key = key;
  Stats s;
  s.count = count;
  s.mean_ns = s.p50_ns = s.p90_ns = s.p99_ns = s.min_ns = s.max_ns = mean_ns;
  it.stats = s;
  return it;
}

TEST(ImplicitMembersTest, CompilerDefinedMembersAttachToTheirClassWhenProductionRanThem) {
  TestTU t;
  t.code = R"src(
namespace ns {
struct Widget {
  int size = 0;
  int grow(int n) { return size += n; }
};
struct Declared {
  Declared() {}
  ~Declared() {}
};
}  // namespace ns
)src";
  auto built = t.build();
  std::vector<std::string> implicit;
  for (const auto& f : built->unit.functions)
    if (f.implicit) implicit.push_back(f.key);
  // Widget declares none of the six; Declared declares its default constructor and destructor.
  EXPECT_NE(std::find(implicit.begin(), implicit.end(), "ns::Widget::~Widget()"), implicit.end());
  EXPECT_NE(std::find(implicit.begin(), implicit.end(), "ns::Widget::Widget(const ns::Widget &)"),
            implicit.end());
  EXPECT_EQ(std::find(implicit.begin(), implicit.end(), "ns::Declared::~Declared()"),
            implicit.end());
  EXPECT_EQ(std::find(implicit.begin(), implicit.end(), "ns::Declared::Declared()"),
            implicit.end());

  // Production ran Widget's destructor and copy constructor (as their symbols spell them).
  InMemoryFeedback view(
      {measured("ns::Widget::~Widget()", 40, 7), measured("_ZN2ns6WidgetC2ERKS0_", 90, 3)});
  SnapshotPtr snap = t.analyze(view);
  const FunctionInfo* dtor = findFunction(*snap, "ns::Widget::~Widget()");
  ASSERT_NE(dtor, nullptr);
  EXPECT_EQ(dtor->match, analysis::MatchKind::Exact);
  ASSERT_TRUE(dtor->root().measured.has_value());
  EXPECT_EQ(dtor->root().measured->count, 7u);
  EXPECT_EQ(dtor->name, "~Widget");
  EXPECT_TRUE(dtor->implicit);
  EXPECT_EQ(dtor->name_range.start.line, 2);  // the class's name
  const FunctionInfo* copy = findFunction(*snap, "ns::Widget::Widget(const ns::Widget &)");
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(copy->match, analysis::MatchKind::Exact);
  // Members production did not run are not shown.
  EXPECT_EQ(findFunction(*snap, "ns::Widget::Widget()"), nullptr);
  EXPECT_EQ(findFunction(*snap, "ns::Widget::operator=(ns::Widget &&)"), nullptr);
  for (const auto& f : snap->functions)
    EXPECT_TRUE(!f.implicit || f.match != analysis::MatchKind::None) << f.key;
}

TEST(ImplicitMembersTest, MembersOfALocalClassAreFunctionsOfTheirOwn) {
  TestTU t;
  t.code = R"src(
int expensive(int);
int cheap(int);
int outer(int n) {
  struct Counter {
    int add(int k) { return expensive(k); }
  };
  Counter c;
  return cheap(n) + c.add(n);
}
)src";
  auto built = t.build();
  const FunctionInfo* local = findFunction(built->unit, "outer(int)::Counter::add(int)");
  ASSERT_NE(local, nullptr);
  const FunctionInfo* out = findFunction(built->unit, "outer(int)");
  ASSERT_NE(out, nullptr);
  std::vector<std::string> outer_callees, local_callees;
  for (const auto& n : out->nodes)
    if (n.kind == NodeKind::Call) outer_callees.push_back(n.call.key);
  for (const auto& n : local->nodes)
    if (n.kind == NodeKind::Call) local_callees.push_back(n.call.key);
  // expensive() is called by the local class's member, not by outer() itself.
  EXPECT_EQ(outer_callees,
            (std::vector<std::string>{"cheap(int)", "outer(int)::Counter::add(int)"}));
  EXPECT_EQ(local_callees, std::vector<std::string>{"expensive(int)"});

  // Production's symbol for the local member (`_ZZ…`) matches it.
  InMemoryFeedback view({measured("_ZZ5outeriEN7Counter3addEi", 500, 10)});
  SnapshotPtr snap = t.analyze(view);
  const FunctionInfo* f = findFunction(*snap, "outer(int)::Counter::add(int)");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->match, analysis::MatchKind::None);
}

TEST(ImplicitMembersTest, ATemplateDefinitionListsTheInstantiationsThatRan) {
  TestTU t;
  t.code = R"src(
namespace ns {
template <typename E> class Queue {
 public:
  void Enqueue(const E& e) { last_ = e; }
 private:
  E last_;
};
}  // namespace ns
)src";
  InMemoryFeedback view({measured("ns::Queue<int>::Enqueue(const int &)", 100, 30),
                         measured("ns::Queue<double>::Enqueue(const double &)", 300, 10)});
  SnapshotPtr snap = t.analyze(view);
  const FunctionInfo* f = findFunction(*snap, "ns::Queue<E>::Enqueue(const E &)");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->match, analysis::MatchKind::Overloads);
  ASSERT_EQ(f->matched.size(), 2u);
  std::vector<std::string> keys{f->matched[0].key, f->matched[1].key};
  std::sort(keys.begin(), keys.end());
  EXPECT_EQ(keys, (std::vector<std::string>{"ns::Queue<double>::Enqueue(const double &)",
                                            "ns::Queue<int>::Enqueue(const int &)"}));
  for (const auto& part : f->matched) ASSERT_TRUE(part.stats.has_value());
  // The function's total is the count-weighted mean of the instantiations.
  ASSERT_TRUE(f->root().measured.has_value());
  EXPECT_EQ(f->root().measured->count, 40u);
  EXPECT_NEAR(f->root().estimate.dist.mean_ns, (30 * 100.0 + 10 * 300.0) / 40, 1e-6);
}

}  // namespace
}  // namespace perfhat::analysis
