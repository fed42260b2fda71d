// The index on disk: summaries survive a restart unchanged, a corrupt or foreign-version file is
// replaced, and a file is parsed again exactly when its content, flags or an included header
// changed.
#include "server/index/summary_store.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "server/analysis/testing/test_tu.h"
#include "server/index/index_test_util.h"
#include "server/index/indexer.h"
#include "server/index/summary_codec.h"

namespace perfhat::index {
namespace {

using analysis::FunctionInfo;
using testing::Workspace;

TEST(SummaryCodec, RoundTripKeepsTheStructureTheInferenceReads) {
  analysis::testing::TestTU t;
  t.code = R"src(
int leaf(int);
constexpr int kCount = 16;
int work(int n) {
  int s = 0;
  for (int i = 0; i < kCount; ++i) {
    if (i % 2) s += leaf(i); else s -= leaf(-i);
  }
  // perfhat: iterations=7
  while (s > n) s -= leaf(s);
  return s;
}
)src";
  auto built = t.build();
  const FunctionInfo* work = analysis::testing::findFunction(built->unit, "work(int)");
  ASSERT_NE(work, nullptr);
  std::optional<FunctionInfo> back = decodeSummary(encodeSummary(*work));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->key, work->key);
  EXPECT_EQ(back->body_hash, work->body_hash);
  ASSERT_EQ(back->nodes.size(), work->nodes.size());
  for (size_t i = 0; i < work->nodes.size(); ++i) {
    const auto &a = work->nodes[i], &b = back->nodes[i];
    EXPECT_EQ(a.kind, b.kind);
    EXPECT_EQ(a.parent, b.parent);
    EXPECT_EQ(a.children, b.children);
    EXPECT_EQ(a.call.key, b.call.key);
    EXPECT_EQ(a.loop.constant_trip, b.loop.constant_trip);
    EXPECT_EQ(a.loop.annotated_iterations, b.loop.annotated_iterations);
    EXPECT_EQ(a.loop.constant_trip_source, b.loop.constant_trip_source);
    EXPECT_EQ(a.branch.prior, b.branch.prior);
    EXPECT_EQ(a.branch.prior_reason, b.branch.prior_reason);
    EXPECT_EQ(a.arm, b.arm);
    EXPECT_EQ(a.range, b.range);
  }
}

// A call through a function pointer, a std::function or a member-function pointer has no callee
// key: the analysis resolves it from production's call sites of its caller, among functions
// taking the parameters the call passes. A body read back from the index must still say so, or
// the call shows as unknown where the file's own parse resolves it.
TEST(SummaryCodec, RoundTripKeepsCallsThroughPointers) {
  analysis::testing::TestTU t;
  t.code = R"src(
#include <functional>
struct Job { int run(int); };
int through(int (*fp)(int), const std::function<int(int, int)>& fn, Job& j,
            int (Job::*mp)(int), int x) {
  return fp(x) + fn(x, 2) + (j.*mp)(x);
}
)src";
  auto built = t.build();
  const FunctionInfo* fn = nullptr;
  for (const FunctionInfo& f : built->unit.functions)
    if (f.name == "through") fn = &f;
  ASSERT_NE(fn, nullptr);
  std::vector<std::string> indirect;
  for (const auto& n : fn->nodes)
    if (n.call.indirect) indirect.push_back(n.call.params);
  ASSERT_EQ(indirect.size(), 3u);  // the pointer, the std::function, the member pointer
  std::optional<FunctionInfo> back = decodeSummary(encodeSummary(*fn));
  ASSERT_TRUE(back);
  ASSERT_EQ(back->nodes.size(), fn->nodes.size());
  std::vector<std::string> decoded;
  for (size_t i = 0; i < fn->nodes.size(); ++i) {
    EXPECT_EQ(back->nodes[i].call.indirect, fn->nodes[i].call.indirect) << "node " << i;
    EXPECT_EQ(back->nodes[i].call.params, fn->nodes[i].call.params) << "node " << i;
    if (back->nodes[i].call.indirect) decoded.push_back(back->nodes[i].call.params);
  }
  EXPECT_EQ(decoded, indirect);
  EXPECT_NE(std::find(decoded.begin(), decoded.end(), "(int, int)"), decoded.end())
      << "the std::function's two parameters";
}

TEST(SummaryCodec, RejectsDamagedText) {
  EXPECT_FALSE(decodeSummary("not json"));
  EXPECT_FALSE(decodeSummary("{}"));
  EXPECT_FALSE(decodeSummary(
      R"j({"key":"f()","mangled":"","name":"f","file":"","range":[0,0,0,0],"name_range":[0,0,0,0],)j"
      R"j("unresolved":0,"implicit":false,"hash":"1","nodes":[{"k":0,"r":[0,0,0,0],"h":[0,0],"c":[5]}]})j"));
}

TEST(SummaryStore, PersistsAcrossReopen) {
  Workspace ws;
  FunctionInfo f;
  f.key = "f()";
  f.name = "f";
  f.body_hash = 0xfedcba9876543210ULL;  // above 2^53: kept exactly
  f.nodes.emplace_back();
  FileStamp stamp{1, 2, {{"/x/h.h", 3}}};
  {
    auto store = SummaryStore::open(ws.path("idx/index.sqlite")).value;
    ASSERT_TRUE(store);
    store->put("/x/a.cc", stamp, {f});
  }
  auto store = SummaryStore::open(ws.path("idx/index.sqlite")).value;
  ASSERT_TRUE(store);
  EXPECT_EQ(store->rebuiltReason(), "");
  ASSERT_TRUE(store->stamp("/x/a.cc"));
  EXPECT_EQ(*store->stamp("/x/a.cc"), stamp);
  auto fns = store->functions("/x/a.cc");
  ASSERT_EQ(fns.size(), 1u);
  EXPECT_EQ(fns[0].body_hash, 0xfedcba9876543210ULL);
  EXPECT_EQ(store->files(), std::vector<std::string>{"/x/a.cc"});
}

TEST(SummaryStore, CorruptFileIsRebuilt) {
  Workspace ws;
  ws.write("index.sqlite", std::string(8192, 'x'));
  auto opened = SummaryStore::open(ws.path("index.sqlite"));
  ASSERT_TRUE(opened) << opened.error;
  auto& store = opened.value;
  EXPECT_NE(store->rebuiltReason(), "");
  EXPECT_TRUE(store->files().empty());
  store->put("/x/a.cc", {}, {});
  EXPECT_EQ(store->files().size(), 1u);
}

TEST(SummaryStore, OtherSchemaVersionIsRebuilt) {
  Workspace ws;
  {
    auto store = SummaryStore::open(ws.path("index.sqlite")).value;
    store->put("/x/a.cc", {}, {});
  }
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(ws.path("index.sqlite").c_str(), &db), SQLITE_OK);
    sqlite3_exec(db, "PRAGMA user_version = 99", nullptr, nullptr, nullptr);
    sqlite3_close(db);
  }
  auto store = SummaryStore::open(ws.path("index.sqlite")).value;
  ASSERT_TRUE(store);
  EXPECT_NE(store->rebuiltReason().find("99"), std::string::npos) << store->rebuiltReason();
  EXPECT_TRUE(store->files().empty());
}

TEST(SummaryStore, UncreatableFileIsAnErrorThatNamesIt) {
  Workspace ws;
  ws.write("plain", "a file where the index's directory would be\n");
  const std::string path = ws.path("plain/index.sqlite");
  auto opened = SummaryStore::open(path);
  EXPECT_FALSE(opened);
  EXPECT_EQ(opened.value, nullptr);
  EXPECT_EQ(opened.error, "cannot open the index " + path + ": could not be opened");
}

class IndexerStamps : public ::testing::Test {
 protected:
  void SetUp() override {
    ws_.write("h.h", "inline int twice(int x) { return 2 * x; }\n");
    ws_.write("a.cc", "#include \"h.h\"\nint a(int x) { return twice(x); }\n");
    ws_.write("b.cc", "int b(int x) { return x + 1; }\n");
    db_ = ws_.database({"a.cc", "b.cc"});
  }
  IndexStats pass() {
    IndexerOptions o;
    o.database = db_;
    o.analysis.workspace_root = ws_.dir();
    o.idle_priority = false;
    auto store = SummaryStore::open(ws_.path(".cache/perfhat/index.sqlite")).value;
    index_ = std::make_shared<WorkspaceIndex>();
    Indexer indexer(index_, std::move(store), o);
    return indexer.run();
  }
  Workspace ws_;
  std::string db_;
  std::shared_ptr<WorkspaceIndex> index_;
};

TEST_F(IndexerStamps, SecondPassReusesEverything) {
  IndexStats first = pass();
  EXPECT_EQ(first.parsed, 2u);
  EXPECT_EQ(first.reused, 0u);
  IndexStats second = pass();
  EXPECT_EQ(second.parsed, 0u);
  EXPECT_EQ(second.reused, 2u);
  // Read back from disk, the summaries are what the parse produced.
  ASSERT_TRUE(index_->find("a(int)"));
  EXPECT_TRUE(index_->find("twice(int)"));  // a header body a.cc's function reaches
  EXPECT_EQ(index_->callersOf("twice(int)").size(), 1u);
}

TEST_F(IndexerStamps, ContentChangeReparsesThatFileOnly) {
  pass();
  ws_.write("b.cc", "int b(int x) { return x + 2; }\n");
  IndexStats s = pass();
  EXPECT_EQ(s.parsed, 1u);
  EXPECT_EQ(s.reused, 1u);
}

TEST_F(IndexerStamps, HeaderChangeReparsesItsIncluders) {
  pass();
  ws_.write("h.h", "inline int twice(int x) { return x + x; }\n");
  IndexStats s = pass();
  EXPECT_EQ(s.parsed, 1u);  // a.cc includes h.h; b.cc does not
  EXPECT_EQ(s.reused, 1u);
}

TEST_F(IndexerStamps, FlagChangeReparsesEverything) {
  pass();
  db_ = ws_.database({"a.cc", "b.cc"}, "-std=c++20 -DNEW_FLAG=1");
  IndexStats s = pass();
  EXPECT_EQ(s.parsed, 2u);
}

TEST_F(IndexerStamps, CancelStopsBeforeTheNextFile) {
  IndexerOptions o;
  o.database = db_;
  o.idle_priority = false;
  Indexer indexer(std::make_shared<WorkspaceIndex>(), nullptr, o);
  indexer.cancel();
  IndexStats s = indexer.run();
  EXPECT_TRUE(s.cancelled);
  EXPECT_EQ(s.parsed, 0u);
}

}  // namespace
}  // namespace perfhat::index
