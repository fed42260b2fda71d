// What the workspace index links after each update (who calls whom, which body a key finds)
// must not depend on how the update is applied: an edit relinks only the functions whose calls
// changed, and the result is checked against an index given only the final texts.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

#include "server/analysis/testing/test_tu.h"
#include "server/index/workspace_index.h"

namespace perfhat::index {
namespace {

using analysis::FunctionInfo;
using analysis::NodeKind;

// Two block-scope classes of one name in one function give two functions of one key: each
// EXPECT_FATAL_FAILURE in a googletest test defines one (gtest_unittest.cc has 76 such bodies).
constexpr const char* kTwoOfOneKey = R"src(int leaf(int);
int twice() {
  int s = 0;
  { struct Helper { static int run() { return leaf(1); } }; s += Helper::run(); }
  { struct Helper { static int run() { return leaf(2) + leaf(3); } }; s += Helper::run(); }
  return s;
}
)src";

TEST(WorkspaceIndexLinks, TwoFunctionsOfOneKeyAreEachUnchangedWhenTheTextIs) {
  analysis::testing::TestTU tu{kTwoOfOneKey};
  auto built = tu.build();
  ASSERT_TRUE(built && built->tu);
  const std::vector<FunctionInfo>& fns = built->unit.functions;
  std::map<std::string, int> per_key;
  for (const auto& f : fns) ++per_key[f.key];
  auto twice = std::find_if(per_key.begin(), per_key.end(), [](const auto& kv) {
    return kv.first.find("Helper::run") != std::string::npos;
  });
  ASSERT_NE(twice, per_key.end());
  ASSERT_EQ(twice->second, 2) << "the test needs two bodies under one key";

  WorkspaceIndex index;
  const std::string path = built->dir + "/main.cc";
  index.setOpen(path, fns);
  EXPECT_EQ(index.setOpen(path, fns), std::vector<std::string>{})
      << "the same text: no body changed";
  EXPECT_EQ(index.setOpen(path, fns), std::vector<std::string>{});
  // One of the two bodies changed: its key is reported, once.
  std::vector<FunctionInfo> edited = fns;
  for (auto& f : edited)
    if (f.key == twice->first) {
      f.body_hash ^= 1;
      break;
    }
  EXPECT_EQ(index.setOpen(path, edited), std::vector<std::string>{twice->first});
  EXPECT_EQ(index.setOpen(path, edited), std::vector<std::string>{});
  EXPECT_EQ(index.callersOf("leaf(int)").size(), 1u) << "callers are listed by key";
}

TEST(WorkspaceIndexLinks, TwoFunctionsOfOneKeyThatSwapPlacesAreNotChanged) {
  // The two bodies of Helper::run trade places: only twice() (whose text moved them) changed.
  constexpr const char* kSwapped = R"src(int leaf(int);
int twice() {
  int s = 0;
  { struct Helper { static int run() { return leaf(2) + leaf(3); } }; s += Helper::run(); }
  { struct Helper { static int run() { return leaf(1); } }; s += Helper::run(); }
  return s;
}
)src";
  analysis::testing::TestTU before_tu{kTwoOfOneKey}, after_tu{kSwapped};
  auto before = before_tu.build();
  auto after = after_tu.build();
  ASSERT_TRUE(before && before->tu && after && after->tu);
  const std::string twice = "twice()", helper = "twice()::Helper::run()";
  ASSERT_EQ(std::count_if(before->unit.functions.begin(), before->unit.functions.end(),
                          [&](const FunctionInfo& f) { return f.key == helper; }),
            2);

  WorkspaceIndex index;
  const std::string path = "/w/main.cc";
  index.setOpen(path, before->unit.functions);
  EXPECT_EQ(index.setOpen(path, after->unit.functions), std::vector<std::string>{twice})
      << "the same two bodies of " << helper << ", in each other's places";
  // The key finds the first body in the file, at its new lines.
  const FunctionInfo* first = nullptr;
  for (const auto& f : after->unit.functions)
    if (f.key == helper && (!first || f.range.start.line < first->range.start.line)) first = &f;
  ASSERT_NE(first, nullptr);
  auto found = index.find(helper);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->body_hash, first->body_hash);
  EXPECT_EQ(found->range, first->range);
  ASSERT_EQ(found->nodes.size(), first->nodes.size());
  for (size_t i = 0; i < found->nodes.size(); ++i)
    EXPECT_EQ(found->nodes[i].range, first->nodes[i].range) << "node " << i;
  EXPECT_EQ(index.callersOf("leaf(int)").size(), 1u);
  // And back.
  EXPECT_EQ(index.setOpen(path, before->unit.functions), std::vector<std::string>{twice});
}

// A function of `file` named `key` whose body (hash) is `hash` and which calls `callees`.
FunctionInfo fn(const std::string& file, const std::string& key, uint64_t hash,
                const std::vector<std::string>& callees) {
  FunctionInfo f;
  f.key = key;
  f.file = file;
  f.body_hash = hash;
  f.nodes.emplace_back();  // the body
  for (const auto& c : callees) {
    analysis::Node n;
    n.kind = NodeKind::Call;
    n.id = static_cast<int>(f.nodes.size());
    n.call.key = c;
    f.nodes.push_back(n);
  }
  return f;
}

// What `index` says about every key: the body found and its callers.
std::map<std::string, std::pair<uint64_t, std::set<std::string>>> linksOf(
    const WorkspaceIndex& index, const std::vector<std::string>& keys) {
  std::map<std::string, std::pair<uint64_t, std::set<std::string>>> out;
  for (const auto& k : keys) {
    auto& entry = out[k];
    if (auto f = index.find(k)) entry.first = f->body_hash;
    for (const auto& c : index.callersOf(k)) entry.second.insert(c.function->key);
  }
  return out;
}

// Callees among `keys`, each with odds 1 in 4.
std::vector<std::string> randomCallees(const std::vector<std::string>& keys, std::mt19937& rng) {
  std::vector<std::string> callees;
  for (const auto& callee : keys)
    if (rng() % 4 == 0) callees.push_back(callee);
  return callees;
}

// An index and the texts it was given, per file: what an index built afresh would be given.
struct TrackedIndex {
  const std::vector<std::string>& files;
  WorkspaceIndex index;
  std::map<size_t, std::vector<FunctionInfo>> indexed, open;

  void setIndexed(size_t file, std::vector<FunctionInfo> text) {
    indexed[file] = std::move(text);
    index.setIndexed(files[file], indexed[file]);
  }
  void closeOpen(size_t file) {
    open.erase(file);
    index.closeOpen(files[file]);
  }
  void setOpen(size_t file, std::vector<FunctionInfo> text) {
    open[file] = std::move(text);
    index.setOpen(files[file], open[file]);
  }
};

TEST(WorkspaceIndexLinks, ManyUpdatesLinkWhatTheFinalTextsLink) {
  const std::vector<std::string> files = {"/w/a.cc", "/w/b.cc", "/w/c.cc"};
  std::vector<std::string> keys;
  for (int i = 0; i < 12; ++i) keys.push_back("f" + std::to_string(i) + "()");
  std::mt19937 rng(25);
  // Each file owns four keys (a key lives in one file); each update of a file gives some of
  // them bodies calling random keys, with duplicates of a key now and then.
  auto textOf = [&](size_t file) {
    std::vector<FunctionInfo> out;
    for (size_t k = file * 4; k < file * 4 + 4; ++k) {
      int copies = rng() % 5 == 0 ? 0 : (rng() % 6 == 0 ? 2 : 1);
      for (int c = 0; c < copies; ++c) {
        std::vector<std::string> callees = randomCallees(keys, rng);
        out.push_back(fn(files[file], keys[k], rng() % 3, callees));
      }
    }
    return out;
  };
  TrackedIndex tracked{files};
  WorkspaceIndex& index = tracked.index;
  const auto& indexed = tracked.indexed;
  const auto& open = tracked.open;
  for (int step = 0; step < 150; ++step) {
    size_t file = rng() % files.size();
    switch (rng() % 4) {
      case 0:
        tracked.setIndexed(file, textOf(file));
        break;
      case 1:
        tracked.closeOpen(file);
        break;
      default: {
        // An edit: the open text so far with one function's body or calls changed, or anew.
        std::vector<FunctionInfo> now =
            open.count(file) && rng() % 2 ? open.at(file) : textOf(file);
        if (!now.empty()) {
          auto& f = now[rng() % now.size()];
          f = fn(f.file, f.key, f.body_hash + 1,
                 rng() % 2 ? std::vector<std::string>{keys[rng() % keys.size()]}
                           : std::vector<std::string>{});
        }
        tracked.setOpen(file, std::move(now));
      }
    }
    WorkspaceIndex fresh;
    for (const auto& [f, fns] : indexed) fresh.setIndexed(files[f], fns);
    for (const auto& [f, fns] : open) fresh.setOpen(files[f], fns);
    ASSERT_EQ(linksOf(index, keys), linksOf(fresh, keys)) << "after step " << step;
    ASSERT_EQ(index.functionCount(), fresh.functionCount()) << "after step " << step;
  }
}

// A header's inline function is seen by every file that includes it: a file giving it up (an
// edit, a closed header) leaves the others' copy found and its calls linked.
TEST(WorkspaceIndexLinks, AKeySeveralFilesProvideStaysWhileOneOfThemProvidesIt) {
  WorkspaceIndex index;
  index.setIndexed("/w/a.cc", {fn("/w/a.cc", "inl()", 1, {"leaf()"}), fn("/w/a.cc", "a()", 2, {})});
  index.setIndexed("/w/b.cc", {fn("/w/b.cc", "inl()", 1, {"leaf()"})});
  index.setOpen("/w/h.h", {fn("/w/h.h", "inl()", 1, {"leaf()"})});
  index.closeOpen("/w/h.h");
  index.setIndexed("/w/b.cc", {});
  ASSERT_NE(index.find("inl()"), nullptr) << "a.cc still provides it";
  EXPECT_EQ(index.find("inl()")->file, "/w/a.cc");
  ASSERT_EQ(index.callersOf("leaf()").size(), 1u);
  // An in-place edit of a.cc (same functions, same order) keeps it too.
  index.setIndexed("/w/a.cc", {fn("/w/a.cc", "inl()", 1, {"leaf()"}), fn("/w/a.cc", "a()", 3, {})});
  ASSERT_NE(index.find("inl()"), nullptr);
  EXPECT_EQ(index.callersOf("leaf()").size(), 1u);
  index.setIndexed("/w/a.cc", {fn("/w/a.cc", "a()", 3, {})});
  EXPECT_EQ(index.find("inl()"), nullptr) << "no file provides it any more";
  EXPECT_TRUE(index.callersOf("leaf()").empty());
}

// Random updates with keys that every file may provide: a key is found exactly while some file
// provides it, the body found is one of the providers', and every caller whose body found calls
// a key is listed among its callers (none is lost when another file's copy goes).
TEST(WorkspaceIndexLinks, ManyUpdatesOfKeysSharedAcrossFilesLinkWhatTheFinalTextsLink) {
  const std::vector<std::string> files = {"/w/a.cc", "/w/b.cc", "/w/c.cc"};
  std::vector<std::string> keys;
  for (int i = 0; i < 6; ++i) keys.push_back("s" + std::to_string(i) + "()");
  std::mt19937 rng(2532);
  auto textOf = [&](size_t file) {
    std::vector<FunctionInfo> out;
    for (const auto& key : keys) {
      if (rng() % 3 == 0) continue;
      std::vector<std::string> callees = randomCallees(keys, rng);
      out.push_back(fn(files[file], key, rng() % 3, callees));
    }
    return out;
  };
  TrackedIndex tracked{files};
  const WorkspaceIndex& index = tracked.index;
  for (int step = 0; step < 300; ++step) {
    size_t file = rng() % files.size();
    switch (rng() % 3) {
      case 0:
        tracked.setIndexed(file, textOf(file));
        break;
      case 1:
        tracked.closeOpen(file);
        break;
      default:
        tracked.setOpen(file, textOf(file));
    }
    std::map<size_t, std::vector<FunctionInfo>> effective = tracked.indexed;
    for (const auto& [f, fns] : tracked.open) effective[f] = fns;
    for (const auto& key : keys) {
      std::set<uint64_t> bodies;
      for (const auto& [f, fns] : effective)
        for (const auto& g : fns)
          if (g.key == key) bodies.insert(g.body_hash);
      const auto found = index.find(key);
      ASSERT_EQ(found != nullptr, !bodies.empty()) << key << " after step " << step;
      if (found) {
        EXPECT_TRUE(bodies.count(found->body_hash)) << key << " after step " << step;
      }
      // One body per key answers for it: a caller is listed when the body found for its key
      // calls `key` (copies of one key in several files are the same code in a real tree).
      std::set<std::string> callers;
      for (const auto& caller : keys) {
        const auto body = index.find(caller);
        if (!body) continue;
        for (const auto& n : body->nodes)
          if (n.kind == NodeKind::Call && n.call.key == key) callers.insert(caller);
      }
      std::set<std::string> linked;
      for (const auto& c : index.callersOf(key)) linked.insert(c.function->key);
      ASSERT_EQ(linked, callers) << key << " after step " << step;
    }
  }
}

}  // namespace
}  // namespace perfhat::index
