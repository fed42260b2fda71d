// Bottom-up inference across files: a call to a function without production data whose body is
// in another translation unit is costed from its indexed summary, recursively, and cycles across
// files end with a named assumption instead of a hang.
#include "server/index/workspace_index.h"

#include <gtest/gtest.h>

#include "common/test_units.h"
#include "server/analysis/analyze.h"
#include "server/analysis/testing/test_tu.h"
#include "server/index/index_test_util.h"
#include "server/index/indexer.h"
#include "server/index/summary_codec.h"

namespace perfhat::index {
namespace {

using analysis::FunctionInfo;
using analysis::NodeKind;
using testing::Workspace;

using perfhat::test_units::kMs;

FeedbackItem measured(const std::string& key, double mean_ns) {
  FeedbackItem it;
  it.key = key;
  Stats s;
  s.count = 1000;
  s.mean_ns = s.p50_ns = mean_ns;
  s.p90_ns = s.p99_ns = mean_ns;
  it.stats = s;
  return it;
}

struct Analysed {
  analysis::SnapshotPtr snap;
  size_t added = 0;
};

// Indexes the workspace, then analyses `file` as the editor would, with the index's bodies.
Analysed analyseWithIndex(const Workspace& ws, const std::vector<std::string>& sources,
                          const std::string& file, WorkspaceIndex& index,
                          const analysis::FeedbackView& view) {
  IndexerOptions o;
  o.database = ws.database(sources);
  o.analysis.workspace_root = ws.dir();
  o.idle_priority = false;
  Indexer(std::shared_ptr<WorkspaceIndex>(&index, [](WorkspaceIndex*) {}), nullptr, o).run();
  auto text = readFile(ws.path(file));
  auto tu = analysis::TranslationUnit::parse(ws.path(file), *text, {"-std=c++20"}).value;
  analysis::ParsedUnit unit = analysis::buildAst(*tu, o.analysis);
  Analysed out;
  out.added = index.augment(unit);
  out.snap = analysis::analyze(unit, view, o.analysis, 1);
  return out;
}

const analysis::Node* callTo(const FunctionInfo& f, const std::string& key) {
  for (const auto& n : f.nodes)
    if (n.kind == NodeKind::Call && n.call.key == key) return &n;
  return nullptr;
}

TEST(WorkspaceIndexInference, CalleeInAnotherFileIsCostedFromItsSummary) {
  Workspace ws;
  ws.write("a.cc", R"src(int leaf(int);
int work(int n) {
  int s = 0;
  for (int i = 0; i < 10; ++i) s += leaf(i);
  return s;
}
)src");
  ws.write("b.cc", R"src(int work(int);
int caller() {
  int s = 0;
  for (int i = 0; i < 5; ++i) s += work(i);
  return s;
}
)src");
  WorkspaceIndex index;
  analysis::InMemoryFeedback view({measured("leaf(int)", 1 * kMs)});
  Analysed a = analyseWithIndex(ws, {"a.cc", "b.cc"}, "b.cc", index, view);
  EXPECT_EQ(a.added, 1u);
  const FunctionInfo* caller = analysis::testing::findFunction(*a.snap, "caller()");
  ASSERT_NE(caller, nullptr);
  const analysis::Node* call = callTo(*caller, "work(int)");
  ASSERT_NE(call, nullptr);
  EXPECT_TRUE(call->estimate.known());
  EXPECT_NEAR(call->estimate.dist.mean_ns, 10 * kMs, 1);
  EXPECT_NEAR(caller->root().estimate.dist.mean_ns, 50 * kMs, 1);
  const auto* body = call->estimate.derivation.assumption<analysis::fact::BodyAnalysed>();
  ASSERT_NE(body, nullptr);
  EXPECT_EQ(body->file, "a.cc");
}

TEST(WorkspaceIndexInference, WithoutTheIndexTheCalleeIsUnknown) {
  Workspace ws;
  ws.write("b.cc", "int work(int);\nint caller() { return work(1); }\n");
  WorkspaceIndex index;  // empty: a.cc is not in the database
  analysis::InMemoryFeedback view;
  Analysed a = analyseWithIndex(ws, {"b.cc"}, "b.cc", index, view);
  EXPECT_EQ(a.added, 0u);
  const FunctionInfo* caller = analysis::testing::findFunction(*a.snap, "caller()");
  ASSERT_NE(caller, nullptr);
  EXPECT_FALSE(callTo(*caller, "work(int)")->estimate.known());
}

TEST(WorkspaceIndexInference, RecursionAcrossFilesIsNamedNotFollowedForever) {
  Workspace ws;
  ws.write("a.cc", "int g(int);\nint f(int n) { return n ? g(n - 1) : 0; }\n");
  ws.write("b.cc", R"src(int f(int);
int leaf(int);
int g(int n) { return f(n) + leaf(n); }
)src");
  WorkspaceIndex index;
  analysis::InMemoryFeedback view({measured("leaf(int)", 1 * kMs)});
  Analysed a = analyseWithIndex(ws, {"a.cc", "b.cc"}, "b.cc", index, view);
  const FunctionInfo* g = analysis::testing::findFunction(*a.snap, "g(int)");
  ASSERT_NE(g, nullptr);
  const analysis::Node* call = callTo(*g, "f(int)");
  ASSERT_NE(call, nullptr);
  // The cycle is named: in the call's summary, its body's summary, or an assumption.
  const analysis::Derivation& d = call->estimate.derivation;
  auto recursive = [](const analysis::fact::Summary& s) {
    return std::holds_alternative<analysis::fact::RecursiveCall>(s) ||
           std::holds_alternative<analysis::fact::RecursionCut>(s);
  };
  bool named = recursive(d.summary) || d.assumption<analysis::fact::RecursionCut>() != nullptr;
  for (const analysis::fact::Input& in : d.inputs)
    if (const auto* b = std::get_if<analysis::fact::BodySummary>(&in.fact))
      named = named || recursive(b->summary);
  EXPECT_TRUE(named);
  // leaf's measured cost still counts in g.
  EXPECT_GE(g->root().estimate.dist.mean_ns, 1 * kMs);
}

TEST(WorkspaceIndex, OpenDocumentReplacesTheIndexedTextAndReportsChangedBodies) {
  WorkspaceIndex index;
  FunctionInfo f;
  f.key = "work(int)";
  f.file = "/w/a.cc";
  f.body_hash = 1;
  f.nodes.emplace_back();
  index.setIndexed("/w/a.cc", {f});
  EXPECT_TRUE(index.setOpen("/w/a.cc", {f}).empty());  // same body
  f.body_hash = 2;
  EXPECT_EQ(index.setOpen("/w/a.cc", {f}), std::vector<std::string>{"work(int)"});
  EXPECT_EQ(index.find("work(int)")->body_hash, 2u);
  index.closeOpen("/w/a.cc");
  EXPECT_EQ(index.find("work(int)")->body_hash, 1u);
}

// An edit above a function moves it by whole lines: the index keeps its encoded summary and
// what find() decodes is the function where it is now. A re-indented body (the same tokens,
// other columns) is encoded again.
// The functions of `text`, parsed as the file `path`.
std::vector<FunctionInfo> functionsOf(const std::string& path, const std::string& text) {
  auto tu = analysis::TranslationUnit::parse(path, text, {"-std=c++20"}).value;
  EXPECT_TRUE(tu);
  return tu ? analysis::buildAst(*tu, analysis::AnalysisOptions{}).functions
            : std::vector<FunctionInfo>{};
}

TEST(WorkspaceIndex, AFunctionMovedByLinesIsFoundWhereItIsNow) {
  const std::string path = "/tmp/perfhat-index-moved.cc";
  auto walk = [&](const std::string& text) { return functionsOf(path, text); };
  const std::string text =
      "int work(int n) {\n  int s = 0;\n  for (int i = 0; i < n; ++i) s += i;\n  return s;\n}\n";
  const std::string reindented =
      "int work(int n) {\n    int s = 0;\n    for (int i = 0; i < n; ++i) s += i;\n    return "
      "s;\n}\n";
  WorkspaceIndex index;
  index.setOpen(path, walk(text));
  for (const std::string& edited :
       {"// one\n// two\n" + text, "// one\n" + text, "// one\n" + reindented, reindented}) {
    std::vector<FunctionInfo> now = walk(edited);
    ASSERT_EQ(now.size(), 1u);
    EXPECT_TRUE(index.setOpen(path, now).empty()) << "the same tokens are the same body";
    FunctionPtr found = index.find("work(int)");
    ASSERT_TRUE(found);
    EXPECT_EQ(encodeSummary(*found), encodeSummary(now[0])) << edited;
    EXPECT_EQ(found->nodes.size(), now[0].nodes.size());
  }
}

// A declaration added above a function moves it and changes what its unchanged tokens mean: the
// call `g(1.5)` resolves to a new overload `g(double)`, and a named bound gets another value. The
// index must hold the function as now analysed, not its old summary moved by lines.
TEST(WorkspaceIndex, AMovedFunctionWhoseCallsNowMeanSomethingElseIsStoredAgain) {
  const std::string path = "/tmp/perfhat-index-moved-meaning.cc";
  auto walk = [&](const std::string& text) { return functionsOf(path, text); };
  const std::string body =
      "int f() {\n  int s = 0;\n  for (int i = 0; i < N; ++i) s += g(1.5);\n  return s;\n}\n";
  WorkspaceIndex index;
  index.setOpen(path, walk("constexpr int N = 4;\nint g(int);\n" + body));
  for (const std::string& edited :
       {"constexpr int N = 4;\nint g(int);\nint g(double);\n" + body,          // another callee
        "constexpr int N = 4000;\n\nint g(int);\nint g(double);\n" + body}) {  // another bound
    std::vector<FunctionInfo> now = walk(edited);
    index.setOpen(path, now);
    FunctionPtr found = index.find("f()");
    ASSERT_TRUE(found);
    const FunctionInfo* fresh = nullptr;
    for (const auto& fn : now)
      if (fn.key == "f()") fresh = &fn;
    ASSERT_TRUE(fresh);
    EXPECT_EQ(encodeSummary(*found), encodeSummary(*fresh)) << edited;
  }
}

}  // namespace
}  // namespace perfhat::index
