// The simplified AST built from real libclang parses of small in-memory TUs (clangd TestTU
// style). Each test parses once; sources avoid standard headers unless the test is about them.
#include "server/analysis/ast_builder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "server/analysis/testing/annotations.h"
#include "server/analysis/testing/test_tu.h"

namespace perfhat::analysis {
namespace {

using testing::Annotations;
using ::testing::Contains;
using ::testing::ElementsAre;
using testing::findFunction;
using ::testing::IsEmpty;
using testing::keysOf;
using testing::nodesOfKind;
using ::testing::Not;
using testing::TestTU;
using ::testing::UnorderedElementsAre;

TEST(AstBuilderTest, FunctionKeysOfDefinitions) {
  TestTU t;
  t.code = R"src(
#include <string>
#include <vector>
#include <map>
namespace agile {
struct Story { int points; };
class BacklogService {
 public:
  int storyPoints(const Story& s) const;
  void overload(int) {}
  void overload(double) {}
  void save(std::string* out, const std::vector<int>& v) {}
  std::map<std::string, int> index(const std::map<std::string, std::vector<int>>& m) { return {}; }
  static std::string name(std::string_view sv) { return std::string(sv); }
  bool operator<(const BacklogService&) const { return false; }
};
int BacklogService::storyPoints(const Story& s) const { return s.points; }
template <typename T> T maxOf(T a, T b) { return a > b ? a : b; }
int withLambda(int x) {
  auto f = [](int y) { return y + 1; };
  auto g = [&]() { return x; };
  return f(x) + g();
}
}  // namespace agile
namespace { void hidden(long long, unsigned short) {} }
extern "C" void c_function(int) {}
extern "C" { void c_block(unsigned long) {} }
)src";
  auto b = t.build();
  EXPECT_THAT(
      keysOf(b->unit),
      ElementsAre("agile::BacklogService::overload(int)", "agile::BacklogService::overload(double)",
                  "agile::BacklogService::save(std::string *, const std::vector<int> &)",
                  "agile::BacklogService::index(const std::map<std::string, "
                  "std::vector<int>> &)",
                  "agile::BacklogService::name(std::string_view)",
                  "agile::BacklogService::operator<(const agile::BacklogService &) const",
                  "agile::BacklogService::storyPoints(const agile::Story &) const",
                  "agile::maxOf<>(T, T)", "agile::withLambda(int)",
                  "agile::withLambda(int)::lambda#1", "agile::withLambda(int)::lambda#2",
                  "(anonymous namespace)::hidden(long long, unsigned short)", "c_function(int)",
                  "c_block(unsigned long)"));
  // libclang's mangling equals what `nm` shows for the same code (see function_key_test).
  const FunctionInfo* sp =
      findFunction(b->unit, "agile::BacklogService::storyPoints(const agile::Story &) const");
  ASSERT_NE(sp, nullptr);
  EXPECT_EQ(sp->mangled, "_ZNK5agile14BacklogService11storyPointsERKNS_5StoryE");
  EXPECT_EQ(
      findFunction(b->unit,
                   "agile::BacklogService::save(std::string *, const "
                   "std::vector<int> &)")
          ->mangled,
      "_ZN5agile14BacklogService4saveEPNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEERKSt"
      "6vectorIiSaIiEE");
  EXPECT_EQ(findFunction(b->unit, "c_function(int)")->mangled, "c_function");
}

TEST(AstBuilderTest, CallsLoopsBranchesWithRangesAndHints) {
  Annotations code(R"src(
struct Task { int hours() const { return 1; } };
struct List { Task* begin() const; Task* end() const; };
struct Svc {
  int load(int id) const;
  List tasks() const;
  Svc();
};
#define CHECK(x) ((x) ? 0 : fail())
#define ADD(x) do { total += (x); } while (0)
int fail();
int work(const Svc& s, int n) {
  int total = 0;
  Svc made;
  for (int i = 0; i < 100; ++i) {$loop0^
    total += $call[[s.load(i)]];
  }
  // perfhat: iterations=7
  while (total < n) {$loop1^
    total += $inner[[s.load(total)]];
  }
  for (auto& t : $producer[[s.tasks()]]) {$loop2^
    total += t.hours();
  }
  if (n > 3) {
    total += s.load(1);
  } else if (n > 1) total += s.load(2); else total += s.load(3);
  total += n ? s.load(4) : s.load(5);
  switch (n) {
    case 1: total += s.load(6); break;
    case 2:
    case 3: total += s.load(7); total += s.load(8); break;
  }
  do { total += 1; } while (0);
  ADD(2);
  CHECK(total);
  return total;
}
)src");
  TestTU t;
  t.code = code.code();
  auto b = t.build();
  EXPECT_THAT(b->unit.problems, IsEmpty());
  const FunctionInfo* f = findFunction(b->unit, "work(const Svc &, int)");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->mangled, "_Z4workRK3Svci");
  // Node ids are pre-order indices; children point back at their parent.
  for (const auto& n : f->nodes)
    for (int c : n.children) EXPECT_EQ(f->nodes[c].parent, n.id);

  auto loops = nodesOfKind(*f, NodeKind::Loop);
  ASSERT_EQ(loops.size(), 3u) << "do { } while (0), written or from a macro, is not a loop";
  EXPECT_EQ(loops[0]->loop.ordinal, 0);
  EXPECT_EQ(loops[0]->loop.kind, LoopKind::For);
  EXPECT_EQ(loops[0]->loop.constant_trip, 100);
  EXPECT_EQ(loops[0]->hint.line, code.point("loop0").line);
  EXPECT_EQ(loops[0]->hint.column, code.point("loop0").column - 1);  // before `{`
  EXPECT_EQ(loops[1]->loop.kind, LoopKind::While);
  EXPECT_EQ(loops[1]->loop.annotated_iterations, 7);
  EXPECT_FALSE(loops[1]->loop.constant_trip);
  EXPECT_EQ(loops[2]->loop.kind, LoopKind::RangeFor);
  EXPECT_EQ(loops[2]->loop.producer_key, "Svc::tasks() const");
  EXPECT_EQ(loops[2]->loop.producer_mangled, "_ZNK3Svc5tasksEv");

  auto calls = nodesOfKind(*f, NodeKind::Call);
  std::vector<std::string> names;
  names.reserve(calls.size());
  for (auto* c : calls) names.push_back(c->call.name);
  // No constructor (`Svc made;`), the macro-expanded fail() is kept, hours() in range-for body.
  EXPECT_THAT(names, ElementsAre("load", "load", "tasks", "hours", "load", "load", "load", "load",
                                 "load", "load", "load", "load", "fail"));
  const Node* first = calls[0];
  EXPECT_EQ(first->range, code.range("call"));
  EXPECT_EQ(first->hint, code.range("call").end);
  EXPECT_EQ(first->call.key, "Svc::load(int) const");
  EXPECT_EQ(first->call.mangled, "_ZNK3Svc4loadEi");
  EXPECT_TRUE(first->call.in_workspace == false) << "declared only, no body anywhere";
  EXPECT_EQ(f->nodes[first->parent].kind, NodeKind::Loop);
  EXPECT_EQ(first->arm, 0);
  EXPECT_EQ(calls[1]->range, code.range("inner"));
  // The range expression is evaluated once, the body every iteration.
  EXPECT_EQ(calls[2]->range, code.range("producer"));
  EXPECT_EQ(calls[2]->arm, -1);
  EXPECT_EQ(calls[3]->arm, 0);
  EXPECT_TRUE(calls[3]->call.in_workspace) << "Task::hours has its body in this TU";

  auto branches = nodesOfKind(*f, NodeKind::Branch);
  ASSERT_EQ(branches.size(), 5u);  // if, nested else-if, ?:, switch, the ?: in CHECK()
  EXPECT_EQ(branches[0]->branch.arms, 2);
  EXPECT_EQ(calls[4]->parent, branches[0]->id);
  EXPECT_EQ(calls[4]->arm, 0);
  EXPECT_EQ(branches[1]->parent, branches[0]->id);
  EXPECT_EQ(branches[1]->arm, 1);
  EXPECT_EQ(calls[5]->arm, 0);
  EXPECT_EQ(calls[6]->arm, 1);
  EXPECT_EQ(calls[7]->parent, branches[2]->id);
  EXPECT_EQ(calls[7]->arm, 0);
  EXPECT_EQ(calls[8]->arm, 1);
  EXPECT_EQ(branches[3]->branch.arms, 3);  // case 1, case 2/3, implicit default
  EXPECT_EQ(calls[9]->arm, 0);
  EXPECT_EQ(calls[10]->arm, 1);
  EXPECT_EQ(calls[11]->arm, 1);
  EXPECT_EQ(calls[12]->parent, branches[4]->id);
  EXPECT_EQ(calls[12]->arm, 1);
  EXPECT_EQ(f->nodes[branches[4]->parent].kind, NodeKind::Function);
}

// An evaluated bound's expression is kept whole, however long: shortening it is the hover's.
TEST(AstBuilderTest, AnEvaluatedBoundKeepsItsWholeExpression) {
  TestTU t;
  std::string sum = "kAlpha";
  for (int i = 1; i < 20; ++i) sum += " + kAlpha";
  t.code =
      "int use(int);\nconstexpr int kAlpha = 1;\nint f() {\n  int t = 0;\n"
      "  for (int i = 0; i < " +
      sum + "; ++i) t += use(i);\n  return t;\n}\n";
  auto b = t.build();
  const FunctionInfo* f = findFunction(b->unit, "f()");
  ASSERT_NE(f, nullptr);
  auto loops = nodesOfKind(*f, NodeKind::Loop);
  ASSERT_EQ(loops.size(), 1u);
  EXPECT_EQ(loops[0]->loop.constant_trip, 20);
  const std::vector<TripCountSource::Evaluated>& e = loops[0]->loop.constant_trip_source.evaluated;
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].tokens.size(), 39u);
  EXPECT_EQ(e[0].tokens.back(), "kAlpha");
  EXPECT_FALSE(e[0].cut);
}

// Loop bounds that are constant expressions but not literals are evaluated (libclang), and the
// source is kept for the hover; a bound known only at run time stays unknown.
TEST(AstBuilderTest, NamedConstantBoundsAreEvaluated) {
  TestTU t;
  t.code = R"src(
namespace std {
template <class T, unsigned long N> struct array { T v[N]; T* begin(); T* end(); };
template <class T, unsigned long N> constexpr unsigned long size(const T (&)[N]) { return N; }
}
int use(int);
constexpr int kCount = 16;
static const int kHalf = kCount / 2;
enum { kSlots = 5 };
template <int N> int tmpl() { int t = 0; for (int i = 0; i < N; ++i) t += use(i); return t; }
int f(int n) {
  int t = 0;
  int arr[12] = {};
  const char* names[] = {"a", "b", "c"};
  std::array<int, 7> fixed{};
  for (int i = 0; i < kCount; ++i) t += use(i);
  for (int i = 0; i < kHalf; ++i) t += use(i);
  for (int i = 0; i <= kSlots; ++i) t += use(i);
  for (unsigned i = 0; i < sizeof(arr) / sizeof(arr[0]); ++i) t += use(i);
  for (unsigned long i = 0; i < std::size(names); ++i) t += use(i);
  for (int i = kCount; i > 0; --i) t += use(i);
  for (int x : arr) t += use(x);
  for (int x : fixed) t += use(x);
  for (int i = 0; i < n; ++i) t += use(i);
  return t;
}
)src";
  auto b = t.build();
  EXPECT_THAT(b->unit.problems, IsEmpty());
  const FunctionInfo* f = findFunction(b->unit, "f(int)");
  ASSERT_NE(f, nullptr);
  auto loops = nodesOfKind(*f, NodeKind::Loop);
  ASSERT_EQ(loops.size(), 9u);
  EXPECT_EQ(loops[0]->loop.constant_trip, 16);
  using Evaluated = std::vector<TripCountSource::Evaluated>;
  EXPECT_EQ(loops[0]->loop.constant_trip_source.evaluated, (Evaluated{{{"kCount"}, 16}}));
  EXPECT_EQ(loops[1]->loop.constant_trip, 8);
  EXPECT_EQ(loops[1]->loop.constant_trip_source.evaluated, (Evaluated{{{"kHalf"}, 8}}));
  EXPECT_EQ(loops[2]->loop.constant_trip, 6);
  EXPECT_EQ(loops[3]->loop.constant_trip, 12);
  EXPECT_EQ(loops[3]->loop.constant_trip_source.evaluated,
            (Evaluated{
                {{"sizeof", "(", "arr", ")", "/", "sizeof", "(", "arr", "[", "0", "]", ")"}, 12}}));
  EXPECT_EQ(loops[4]->loop.constant_trip, 3);
  EXPECT_EQ(loops[4]->loop.constant_trip_source.evaluated,
            (Evaluated{{{"std", "::", "size", "(", "names", ")"}, 3}}));
  EXPECT_EQ(loops[5]->loop.constant_trip, 16);
  EXPECT_EQ(loops[6]->loop.constant_trip, 12);
  ASSERT_TRUE(loops[6]->loop.constant_trip_source.array);
  EXPECT_EQ(loops[6]->loop.constant_trip_source.array->extent, 12);
  EXPECT_EQ(loops[7]->loop.constant_trip, 7);
  EXPECT_FALSE(loops[8]->loop.constant_trip);  // run-time bound
  const FunctionInfo* g = findFunction(b->unit, "tmpl<>()");
  if (g) {
    auto tl = nodesOfKind(*g, NodeKind::Loop);
    ASSERT_EQ(tl.size(), 1u);
    EXPECT_FALSE(tl[0]->loop.constant_trip);  // depends on a template parameter
  }
}

TEST(AstBuilderTest, WorkspaceHeaderBodiesAndReferencedKeys) {
  TestTU t;
  t.headers["store.h"] = R"src(
#pragma once
namespace store {
inline int fetch(int id) { return id * 2; }
int remote(int id);
}
)src";
  t.code = R"src(
#include "store.h"
int use(int id) { return store::fetch(id) + store::remote(id); }
)src";
  auto b = t.build();
  ASSERT_EQ(b->unit.functions.size(), 1u);
  auto calls = nodesOfKind(b->unit.functions[0], NodeKind::Call);
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_TRUE(calls[0]->call.in_workspace);
  EXPECT_FALSE(calls[1]->call.in_workspace);
  EXPECT_EQ(b->unit.workspace_bodies.count("store::fetch(int)"), 1u);
  EXPECT_THAT(referencedKeys(b->unit),
              UnorderedElementsAre("use(int)", "_Z3usei", "store::fetch(int)", "_ZN5store5fetchEi",
                                   "store::remote(int)", "_ZN5store6remoteEi"));
}

TEST(AstBuilderTest, ParseErrorsAreReportedAndTheRestIsStillBuilt) {
  Annotations code(R"src(
int ok(int x) { return x; }
int broken(int x) { return $err[[undefined_thing]](x); }
)src");
  TestTU t;
  t.code = code.code();
  auto b = t.build();
  ASSERT_FALSE(b->unit.problems.empty());
  EXPECT_TRUE(b->unit.problems[0].error);
  EXPECT_EQ(b->unit.problems[0].range.start, code.range("err").start);
  EXPECT_THAT(b->unit.problems[0].message, ::testing::HasSubstr("undefined_thing"));
  EXPECT_THAT(keysOf(b->unit), Contains("ok(int)"));
}

TEST(AstBuilderTest, OperatorCallsInsertedByTheCompilerAreNotCalls) {
  // A range-for calls begin/end/operator!=/operator++/operator* implicitly, and a condition
  // converts with operator bool: none of these is a call as written, so none gets a hint.
  // A written `*it` is a call; conversions, even inside an explicit cast, are not.
  TestTU t;
  t.code = R"src(
struct It { int* p; int& operator*() const { return *p; } It& operator++() { ++p; return *this; }
            bool operator!=(const It& o) const { return p != o.p; } };
struct Bag { int v[3]; It begin() { return It{v}; } It end() { return It{v + 3}; }
             explicit operator bool() const { return true; } };
Bag& bag();
int sum() {
  int s = 0;
  for (int x : bag()) s += x;
  It it = bag().begin();
  if (bag()) s += *it;
  return s + static_cast<int>(static_cast<bool>(bag()));
}
)src";
  auto b = t.build();
  const FunctionInfo* sum = findFunction(b->unit, "sum()");
  ASSERT_NE(sum, nullptr);
  std::vector<std::string> callees;
  for (const Node* n : nodesOfKind(*sum, NodeKind::Call)) callees.push_back(n->call.key);
  EXPECT_THAT(callees, UnorderedElementsAre("bag()", "bag()", "Bag::begin()", "bag()",
                                            "It::operator*() const", "bag()"));
}

TEST(AstBuilderTest, CallsFoldedAtCompileTimeAreNotCalls) {
  // A constexpr function called with constant arguments is evaluated by the compiler (here in a
  // constexpr initializer, as the probe macros do); the same function called with a run-time
  // argument is a call.
  TestTU t;
  t.code = R"src(
constexpr int twice(int x) { return 2 * x; }
int g();
int f(int n) {
  static constexpr int k = twice(3);
  static_assert(twice(2) == 4);
  return g() + k + twice(n);
}
)src";
  auto b = t.build();
  const FunctionInfo* f = findFunction(b->unit, "f(int)");
  ASSERT_NE(f, nullptr);
  std::vector<std::string> callees;
  for (const Node* n : nodesOfKind(*f, NodeKind::Call)) callees.push_back(n->call.key);
  EXPECT_THAT(callees, UnorderedElementsAre("g()", "twice(int)"));
}

TEST(AstBuilderTest, ConstexprCallsOnRunTimeStateAreCalls) {
  // A constexpr member function called on a parameter, on `this` (implicitly or explicitly) or
  // with a non-const local runs at run time: a call node. One called with a const local that
  // holds a constant is folded.
  TestTU t;
  t.code = R"src(
struct S {
  int n = 0;
  constexpr int size() const { return n; }
  constexpr int one() const { return 1; }
  int use() const { return one() + this->size(); }
};
constexpr int twice(int x) { return 2 * x; }
int f(const S& s) {
  const int c = 4;
  int v = 5;
  static constexpr int k = twice(c);
  return s.size() + twice(v) + k;
}
)src";
  auto b = t.build();
  const FunctionInfo* f = findFunction(b->unit, "f(const S &)");
  ASSERT_NE(f, nullptr);
  std::vector<std::string> names;
  for (const Node* n : nodesOfKind(*f, NodeKind::Call)) names.push_back(n->call.name);
  EXPECT_THAT(names, UnorderedElementsAre("size", "twice"));
  const FunctionInfo* use = findFunction(b->unit, "S::use() const");
  ASSERT_NE(use, nullptr);
  names.clear();
  for (const Node* n : nodesOfKind(*use, NodeKind::Call)) names.push_back(n->call.name);
  EXPECT_THAT(names, UnorderedElementsAre("one", "size"));
}

TEST(AstBuilderTest, ReparseSeesTheEdit) {
  TestTU t;
  t.code = "int g(int);\nint f(int x) { return x; }\n";
  auto b = t.build();
  EXPECT_TRUE(nodesOfKind(b->unit.functions[0], NodeKind::Call).empty());
  ASSERT_TRUE(b->tu->reparse("int g(int);\nint f(int x) { return g(x); }\n"));
  EXPECT_EQ(b->tu->parseCount(), 2);
  ParsedUnit again = buildAst(*b->tu, AnalysisOptions{});
  auto calls = nodesOfKind(again.functions[0], NodeKind::Call);
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0]->call.key, "g(int)");
}

TEST(AstBuilderTest, TemplateCallsCarryTheInstantiation) {
  TestTU t;
  t.code = R"src(
template <typename T> T maxOf(T a, T b) { return a > b ? a : b; }
template <typename T> struct Box { void put(const T&) {} };
int use() { Box<int>().put(1); return maxOf(1, 2); }
)src";
  auto b = t.build();
  const FunctionInfo* use = findFunction(b->unit, "use()");
  ASSERT_NE(use, nullptr);
  auto calls = nodesOfKind(*use, NodeKind::Call);
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0]->call.key, "Box<int>::put(const int &)");
  EXPECT_EQ(calls[0]->call.mangled, "_ZN3BoxIiE3putERKi");
  EXPECT_EQ(calls[1]->call.key, "maxOf<int>(int, int)");
  EXPECT_EQ(calls[1]->call.mangled, "_Z5maxOfIiET_S0_S0_");
  EXPECT_TRUE(calls[1]->call.in_workspace);
}

// Static branch priors (Ball & Larus heuristics) for branches without production branch counts:
// the probability that arm 0 is taken, in source order of the branches below.
TEST(AstBuilderTest, BranchPriorsFromTheConditionAndTheArms) {
  TestTU t;
  t.code = R"src(
    struct Task {
      int effort() const;
    };
    struct Handle {
      explicit operator bool() const;
    };
    struct Error {};
    Task* find(int id);
    Handle open(int id);
    int use(int);
    int prior(int id, int n, bool flag, double x) {
      int total = 0;
      Task* p = find(id);
      if (p) total += use(1);             // pointer: non-null likely
      if (p == nullptr) total += use(2);  // pointer: == null unlikely
      if (!p) total += use(3);            // negated pointer
      if (open(id)) total += use(4);      // handle with operator bool, like a pointer
      if (n == 3) total += use(5);        // opcode: x == C unlikely
      if (n != 0) total += use(6);        // x != C likely
      if (n < 0) total += use(7);         // x < 0 unlikely
      if (flag) total += use(8);          // a bool: no heuristic
      if (x == 1.5) total += use(9);      // float equality unlikely
      if (flag) throw Error{};            // error path
      if (flag) return use(10);           // early return
      if (flag) {
        use(11);
      } else {
        return 0;
      }  // the else arm returns
      for (int i = 0; i < n; ++i) {
        if (flag) break;       // loop exit
        if (flag) continue;    // no heuristic for continue
        if (i == 2) continue;  // only the condition's
      }
      if (!p) return 0;                   // pointer and return combined
      total += flag ? use(12) : use(13);  // ?: with a bool condition
      total += p ? use(14) : use(15);     // ?: with a pointer condition
      return total;
    }
  )src";
  auto b = t.build();
  EXPECT_THAT(b->unit.problems, IsEmpty());
  const FunctionInfo* f = findFunction(b->unit, "prior(int, int, bool, double)");
  ASSERT_NE(f, nullptr);
  const std::vector<const Node*> br = nodesOfKind(*f, NodeKind::Branch);
  ASSERT_EQ(br.size(), 18u);
  const double likely = 20.0 / 32, unlikely = 12.0 / 32;
  auto prior = [&](size_t i) { return br[i]->branch.prior.value_or(-1); };
  EXPECT_DOUBLE_EQ(prior(0), likely);
  using H = BranchHeuristic;
  auto heuristics = [&](size_t i) { return br[i]->branch.prior_reason.heuristics; };
  using Matches = std::vector<HeuristicMatch>;
  EXPECT_EQ(heuristics(0), (Matches{{H::PointerNonNull}}));
  EXPECT_DOUBLE_EQ(prior(1), unlikely);
  EXPECT_DOUBLE_EQ(prior(2), unlikely);
  EXPECT_EQ(heuristics(2), (Matches{{H::PointerNonNull, true}}));
  EXPECT_DOUBLE_EQ(prior(3), likely);
  EXPECT_DOUBLE_EQ(prior(4), unlikely);
  EXPECT_EQ(heuristics(4), (Matches{{H::OpcodeEqual}}));
  EXPECT_DOUBLE_EQ(prior(5), likely);
  EXPECT_DOUBLE_EQ(prior(6), unlikely);
  EXPECT_FALSE(br[7]->branch.prior);
  EXPECT_DOUBLE_EQ(prior(8), unlikely);
  EXPECT_DOUBLE_EQ(prior(9), 4.0 / 128);
  EXPECT_DOUBLE_EQ(prior(10), 0.28);
  EXPECT_DOUBLE_EQ(prior(11), 1 - 0.28);
  EXPECT_EQ(heuristics(11), (Matches{{H::ReturnEarly, false, true}}));
  EXPECT_DOUBLE_EQ(prior(12), 0.20);
  EXPECT_FALSE(br[13]->branch.prior);
  EXPECT_DOUBLE_EQ(prior(14), unlikely);
  // Wu & Larus's Dempster-Shafer combination of two heuristics that agree: stronger than either.
  const double both = unlikely * 0.28 / (unlikely * 0.28 + (1 - unlikely) * (1 - 0.28));
  EXPECT_DOUBLE_EQ(prior(15), both);
  EXPECT_EQ(heuristics(15), (Matches{{H::PointerNonNull, true}, {H::ReturnEarly}}));
  EXPECT_FALSE(br[16]->branch.prior);
  EXPECT_DOUBLE_EQ(prior(17), likely);
}

}  // namespace
}  // namespace perfhat::analysis

namespace perfhat::analysis {
namespace {

// An else-if chain nests one branch per `else if`: past max_nesting_depth the walk stops, says so
// in a warning at the first statement it skipped, and counts the function as incomplete; the
// calls before the limit keep their nodes.
TEST(AstBuilderDepth, ElseIfChainPastTheLimitIsTruncatedVisibly) {
  testing::TestTU t;
  t.code = "int g(int);\nint dispatch(int x) {\n";
  for (int i = 0; i < 60; ++i) {
    t.code += std::string(i ? "  else if" : "  if") + " (x == " + std::to_string(i) +
              ") return g(" + std::to_string(i) + ");\n";
  }
  t.code += "  return 0;\n}\n";
  t.options.max_nesting_depth = 20;
  auto built = t.build();
  const FunctionInfo* f = testing::findFunction(built->unit, "dispatch(int)");
  ASSERT_NE(f, nullptr);
  size_t calls = testing::nodesOfKind(*f, NodeKind::Call).size();
  EXPECT_GT(calls, 5u);
  EXPECT_LT(calls, 60u);
  EXPECT_GE(f->unresolved_calls, 1);
  int warnings = 0;
  for (const ParseProblem& p : built->unit.problems) {
    if (p.truncated == ParseProblem::Truncated{20, "dispatch"}) {
      ++warnings;
      EXPECT_FALSE(p.error);
      EXPECT_TRUE(f->range.contains(p.range.start));
    }
  }
  EXPECT_EQ(warnings, 1);

  t.options.max_nesting_depth = AnalysisOptions().max_nesting_depth;
  auto full = t.build();
  const FunctionInfo* all = testing::findFunction(full->unit, "dispatch(int)");
  ASSERT_NE(all, nullptr);
  EXPECT_EQ(testing::nodesOfKind(*all, NodeKind::Call).size(), 60u);
  EXPECT_EQ(all->unresolved_calls, 0);
}

// Negation chains and a range-for over a long expression are walked without recursion.
TEST(AstBuilderDepth, NegationChainKeepsItsPrior) {
  testing::TestTU t;
  t.code = "int* find(int);\nint g(int);\nint f(int x) {\n  if (" + std::string(2001, '!') +
           "find(x)) return g(1);\n  return 0;\n}\n";
  auto built = t.build();
  const FunctionInfo* f = testing::findFunction(built->unit, "f(int)");
  ASSERT_NE(f, nullptr);
  auto branches = testing::nodesOfKind(*f, NodeKind::Branch);
  ASSERT_EQ(branches.size(), 1u);
  ASSERT_TRUE(branches[0]->branch.prior.has_value());
  // An odd number of negations of a pointer test: the null case, unlikely.
  EXPECT_LT(*branches[0]->branch.prior, 0.5);
}

}  // namespace
}  // namespace perfhat::analysis
