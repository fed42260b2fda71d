// WalkCache (issue #25): an edit of the main file below its includes walks only the main
// file's definitions and takes the workspace headers' bodies from the last walk; a header that
// changes on disk, or an edit above the last #include, walks them again.
#include "server/server/walk_cache.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

namespace perfhat::server {
namespace {

namespace fs = std::filesystem;

constexpr const char* kHeader = R"src(#pragma once
inline int work(int n) {
  int s = 0;
  for (int i = 0; i < n; ++i) s += i;
  return s;
}
inline int other(int n) { return n * 2; }
)src";

// The same function with a second loop: a different body.
constexpr const char* kHeaderEdited = R"src(#pragma once
inline int work(int n) {
  int s = 0;
  for (int i = 0; i < n; ++i) s += i;
  for (int j = 0; j < n; ++j) s -= j;
  return s;
}
inline int other(int n) { return n * 2; }
)src";

constexpr const char* kMain = R"src(#include "work.h"
int caller(int k) {
  int t = 0;
  for (int i = 0; i < k; ++i) t += work(i);
  return t;
}
)src";

class WalkCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/perfhat-header-bodies-XXXXXX";
    dir_ = mkdtemp(tmpl);
    options_.workspace_root = dir_;
    writeHeader(kHeader);
    main_ = dir_ + "/main.cc";
    std::ofstream(main_) << kMain;  // on disk, so that libclang keeps a preamble for reparses
    tu_ = analysis::TranslationUnit::parse(main_, kMain, {"-xc++", "-std=c++17"}).value;
    ASSERT_TRUE(tu_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  void writeHeader(const char* text) {
    std::ofstream(dir_ + "/work.h", std::ios::trunc) << text;
    // A later modification time than the preamble's, whatever the file system's resolution.
    fs::last_write_time(dir_ + "/work.h", fs::file_time_type::clock::now() + std::chrono::hours(1));
  }
  // The unit a walk of everything gives for the TU as it stands: what the cache must equal.
  analysis::ParsedUnit fresh() { return analysis::buildAst(*tu_, options_); }
  // Builds `text`, then `text` with `from` replaced by `to`: the second build's unit.
  analysis::ParsedUnit buildThenEdit(const std::string& text, const std::string& from,
                                     const std::string& to) {
    EXPECT_TRUE(tu_->reparse(text));
    cache_.build(*tu_, options_);
    std::string edited = text;
    const size_t at = edited.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) edited.replace(at, from.size(), to);
    EXPECT_TRUE(tu_->reparse(edited));
    return cache_.build(*tu_, options_);
  }

  // `text` with `lines` added before the first `return t;` (the end of kMain's caller, of kTwo's
  // first): an edit inside that body, which moves every body after it down.
  static std::string withLinesInFirstBody(std::string text, const std::string& lines) {
    text.insert(text.find("  return t;"), lines);
    return text;
  }

  static void expectSameBodies(const analysis::ParsedUnit& a, const analysis::ParsedUnit& b) {
    ASSERT_EQ(a.workspace_bodies.size(), b.workspace_bodies.size());
    for (const auto& [key, f] : a.workspace_bodies) {
      auto it = b.workspace_bodies.find(key);
      ASSERT_NE(it, b.workspace_bodies.end()) << key;
      EXPECT_EQ(f.body_hash, it->second.body_hash) << key;
      EXPECT_EQ(f.nodes.size(), it->second.nodes.size()) << key;
    }
    ASSERT_EQ(a.functions.size(), b.functions.size());
    for (size_t i = 0; i < a.functions.size(); ++i) {
      const analysis::FunctionInfo &f = a.functions[i], &g = b.functions[i];
      EXPECT_EQ(f.key, g.key);
      EXPECT_EQ(f.body_hash, g.body_hash);
      EXPECT_EQ(f.range, g.range) << f.key;
      EXPECT_EQ(f.name_range, g.name_range) << f.key;
      EXPECT_EQ(f.unresolved_calls, g.unresolved_calls) << f.key;
      ASSERT_EQ(f.nodes.size(), g.nodes.size()) << f.key;
      for (size_t k = 0; k < f.nodes.size(); ++k) {
        EXPECT_EQ(f.nodes[k].range, g.nodes[k].range) << f.key << " node " << k;
        EXPECT_EQ(f.nodes[k].hint, g.nodes[k].hint) << f.key << " node " << k;
        EXPECT_EQ(f.nodes[k].call.key, g.nodes[k].call.key) << f.key << " node " << k;
      }
    }
  }

  std::string dir_, main_;
  analysis::AnalysisOptions options_;
  std::unique_ptr<analysis::TranslationUnit> tu_;
  WalkCache cache_;
};

TEST_F(WalkCacheTest, AnEditBelowTheIncludesReusesTheHeadersBodies) {
  analysis::ParsedUnit first = cache_.build(*tu_, options_);
  EXPECT_FALSE(cache_.last().reused);
  EXPECT_EQ(cache_.last().header_walked, 2u);  // work and other
  ASSERT_EQ(first.workspace_bodies.count("work(int)"), 1u);

  std::string edited = std::string(kMain) + "int twice(int k) { return 2 * caller(k); }\n";
  ASSERT_TRUE(tu_->reparse(edited));
  analysis::ParsedUnit second = cache_.build(*tu_, options_);
  EXPECT_TRUE(cache_.last().reused);
  EXPECT_EQ(cache_.last().header_walked, 0u) << "an unchanged header was walked again";
  EXPECT_EQ(second.header_functions_walked, 0u);
  ASSERT_EQ(second.functions.size(), 2u);  // the edit is seen: caller and twice
  expectSameBodies(second, fresh());
}

TEST_F(WalkCacheTest, AHeaderChangedOnDiskIsWalkedAgain) {
  analysis::ParsedUnit first = cache_.build(*tu_, options_);
  const uint64_t before = first.workspace_bodies.at("work(int)").body_hash;
  writeHeader(kHeaderEdited);
  ASSERT_TRUE(tu_->reparse(kMain));
  analysis::ParsedUnit second = cache_.build(*tu_, options_);
  EXPECT_FALSE(cache_.last().reused);
  EXPECT_EQ(cache_.last().header_walked, 2u);
  const analysis::FunctionInfo& work = second.workspace_bodies.at("work(int)");
  EXPECT_NE(work.body_hash, before) << "the header's new body was not seen";
  int loops = 0;
  for (const auto& n : work.nodes) loops += n.kind == analysis::NodeKind::Loop;
  EXPECT_EQ(loops, 2);
  expectSameBodies(second, fresh());

  // And the next edit of the main file reuses the new bodies.
  ASSERT_TRUE(tu_->reparse(std::string(kMain) + "\n"));
  analysis::ParsedUnit third = cache_.build(*tu_, options_);
  EXPECT_TRUE(cache_.last().reused);
  EXPECT_EQ(third.workspace_bodies.at("work(int)").body_hash, work.body_hash);
}

TEST_F(WalkCacheTest, AnEditAboveTheLastIncludeWalksTheHeadersAgain) {
  cache_.build(*tu_, options_);
  // A macro the header sees: the header's bodies may expand differently.
  ASSERT_TRUE(tu_->reparse(std::string("#define EXTRA 1\n") + kMain));
  analysis::ParsedUnit second = cache_.build(*tu_, options_);
  EXPECT_FALSE(cache_.last().reused);
  EXPECT_EQ(cache_.last().header_walked, 2u);
  expectSameBodies(second, fresh());
}

TEST_F(WalkCacheTest, OtherFlagsAreAnotherKey) {
  auto key = WalkCache::contextKey(*tu_, dir_);
  ASSERT_TRUE(key);
  auto other = analysis::TranslationUnit::parse(main_, kMain, {"-xc++", "-std=c++20"}).value;
  ASSERT_TRUE(other);
  auto key2 = WalkCache::contextKey(*other, dir_);
  ASSERT_TRUE(key2);
  EXPECT_NE(*key, *key2);
  auto same = analysis::TranslationUnit::parse(main_, kMain, {"-xc++", "-std=c++17"}).value;
  EXPECT_EQ(WalkCache::contextKey(*same, dir_), key);
}

// header_context.h: an edit below the includes does not ask libclang for the inclusions again;
// whatever could change them does.
TEST_F(WalkCacheTest, AnEditBelowTheIncludesKeepsTheInclusionsItScanned) {
  cache_.build(*tu_, options_);
  EXPECT_TRUE(cache_.last().inclusions_scanned);
  ASSERT_TRUE(tu_->reparse(std::string(kMain) + "int twice(int k) { return 2 * caller(k); }\n"));
  const analysis::ParsedUnit second = cache_.build(*tu_, options_);
  EXPECT_FALSE(cache_.last().inclusions_scanned);
  EXPECT_TRUE(cache_.last().reused);
  expectSameBodies(second, fresh());
}

TEST_F(WalkCacheTest, AnIncludeAddedBelowTheOthersWalksTheHeadersAgain) {
  std::ofstream(dir_ + "/extra.h") << "#pragma once\ninline int extra(int n) {\n"
                                      "  int s = 0;\n  for (int i = 0; i < n; ++i) s ^= i;\n"
                                      "  return s;\n}\n";
  cache_.build(*tu_, options_);
  ASSERT_TRUE(tu_->reparse(std::string(kMain) +
                           "int gap(int k) { return k; }\n  #  include \"extra.h\"\n"
                           "int more(int k) { return extra(k); }\n"));
  const analysis::ParsedUnit second = cache_.build(*tu_, options_);
  EXPECT_TRUE(cache_.last().inclusions_scanned);
  EXPECT_FALSE(cache_.last().reused);
  EXPECT_EQ(second.workspace_bodies.count("extra(int)"), 1u) << "the new header was not seen";
  expectSameBodies(second, fresh());
}

TEST_F(WalkCacheTest, AnEditThatLengthensTheLastIncludeLineIsScannedAgain) {
  std::ofstream(dir_ + "/extra.h") << "#pragma once\ninline int extra(int n) { return n; }\n";
  const std::string head = "#define A \"work.h\"\n#define AB \"extra.h\"\n#include A";
  const std::string body = "\nint caller(int k) { return work(k); }\n";
  ASSERT_TRUE(tu_->reparse(head + body));
  cache_.build(*tu_, options_);
  // The same text up to the end of the old last #include, then more on that line.
  ASSERT_TRUE(tu_->reparse(head + "B" + body + "int more(int k) { return extra(k); }\n"));
  const analysis::ParsedUnit second = cache_.build(*tu_, options_);
  EXPECT_TRUE(cache_.last().inclusions_scanned);
  EXPECT_EQ(second.workspace_bodies.count("extra(int)"), 1u) << "the new header was not seen";
  expectSameBodies(second, fresh());
}

TEST_F(WalkCacheTest, AHeaderThatNowIncludesAnotherIsFollowed) {
  const std::string more = dir_ + "/more.h";
  std::ofstream(more) << "#pragma once\ninline int more(int n) { return n + 1; }\n";
  cache_.build(*tu_, options_);
  // work.h now includes more.h: its content moved, so the inclusions are scanned again.
  writeHeader((std::string(kHeader) + "#include \"more.h\"\n").c_str());
  ASSERT_TRUE(tu_->reparse(kMain));
  const analysis::ParsedUnit second = cache_.build(*tu_, options_);
  EXPECT_TRUE(cache_.last().inclusions_scanned);
  ASSERT_EQ(second.workspace_bodies.count("more(int)"), 1u);
  // more.h changes on disk; the main file is edited below its includes.
  std::ofstream(more, std::ios::trunc) << "#pragma once\ninline int more(int n) {\n  int s = 0;\n"
                                          "  for (int i = 0; i < n; ++i) s += i;\n  return s;\n}\n";
  fs::last_write_time(more, fs::file_time_type::clock::now() + std::chrono::hours(2));
  ASSERT_TRUE(tu_->reparse(std::string(kMain) + "\n"));
  const analysis::ParsedUnit third = cache_.build(*tu_, options_);
  EXPECT_FALSE(cache_.last().reused) << "a change to the newly included header was missed";
  EXPECT_NE(third.workspace_bodies.at("more(int)").body_hash,
            second.workspace_bodies.at("more(int)").body_hash);
  expectSameBodies(third, fresh());
}

// The main file's definitions: an edit inside one body walks that body only; the others are
// taken from the last walk, moved by the lines the edit added above them.
constexpr const char* kTwo = R"src(#include "work.h"
int first(int k) {
  int t = 0;
  for (int i = 0; i < k; ++i) t += work(i);
  return t;
}
int second(int k) {
  if (k > 3) return other(k);
  return first(k);
}
)src";

TEST_F(WalkCacheTest, AnEditInsideOneBodyWalksThatBodyOnly) {
  ASSERT_TRUE(tu_->reparse(kTwo));
  cache_.build(*tu_, options_);
  EXPECT_EQ(cache_.last().main_walked, 2u);
  EXPECT_EQ(cache_.last().main_reused, 0u);

  // Two more lines in first's body: second moves down by two lines.
  ASSERT_TRUE(tu_->reparse(withLinesInFirstBody(kTwo, "  t += other(t);\n  t -= 1;\n")));
  analysis::ParsedUnit unit = cache_.build(*tu_, options_);
  EXPECT_EQ(cache_.last().main_walked, 1u) << "an unchanged body was walked again";
  EXPECT_EQ(cache_.last().main_reused, 1u);
  expectSameBodies(unit, fresh());  // ranges and hints included
}

// The main file's functions are lent to the unit, not copied: what the caller marks in them (the
// workspace index marks calls it has a body for) is undone when they come back, and a unit that
// does not come back leaves nothing of the main file to reuse.
TEST_F(WalkCacheTest, ALentUnitComesBackAsWalked) {
  ASSERT_TRUE(tu_->reparse(kTwo));
  analysis::ParsedUnit lent = cache_.lend(*tu_, options_);
  for (auto& f : lent.functions)
    for (auto& n : f.nodes) n.call.in_workspace = !n.call.in_workspace;
  cache_.giveBack(std::move(lent));
  ASSERT_TRUE(tu_->reparse(withLinesInFirstBody(kTwo, "  t += 1;\n")));
  analysis::ParsedUnit unit = cache_.lend(*tu_, options_);
  EXPECT_EQ(cache_.last().main_reused, 1u);
  const analysis::ParsedUnit walked = fresh();
  expectSameBodies(unit, walked);
  for (size_t i = 0; i < unit.functions.size() && i < walked.functions.size(); ++i)
    for (size_t k = 0; k < unit.functions[i].nodes.size(); ++k)
      EXPECT_EQ(unit.functions[i].nodes[k].call.in_workspace,
                walked.functions[i].nodes[k].call.in_workspace)
          << unit.functions[i].key << " node " << k;
  // Not given back: the next build walks every body, and gives what a walk gives.
  ASSERT_TRUE(tu_->reparse(kTwo));
  analysis::ParsedUnit again = cache_.lend(*tu_, options_);
  EXPECT_EQ(cache_.last().main_reused, 0u);
  EXPECT_EQ(cache_.last().main_walked, 2u);
  expectSameBodies(again, fresh());
  cache_.giveBack(std::move(again));
}

// The build counts the parse errors inside a body as unresolved calls; they are not the walk's: a
// template whose error only the instantiation in another body made comes back without it once
// that body is fixed.
TEST_F(WalkCacheTest, AnErrorAnotherBodyCausedIsNotKeptWithTheTemplate) {
  const std::string text = std::string("#include \"work.h\"\n") +
                           "template <typename T> int b(T t) { return t.size() + work(1); }\n"
                           "int a(int k) { return b(k); }\n";
  ASSERT_TRUE(tu_->reparse(text));
  ASSERT_FALSE(fresh().problems.empty()) << "the test needs the instantiation's error";
  analysis::ParsedUnit unit = buildThenEdit(text, "return b(k);", "return k;");
  EXPECT_EQ(cache_.last().main_reused, 1u);
  expectSameBodies(unit, fresh());
}

// A unit given back reordered is not the one lent: its functions must not go to the entries of
// others (the next build would take one definition's result for another's).
TEST_F(WalkCacheTest, AReorderedUnitGivenBackIsNotKept) {
  ASSERT_TRUE(tu_->reparse(kTwo));
  analysis::ParsedUnit lent = cache_.lend(*tu_, options_);
  ASSERT_EQ(lent.functions.size(), 2u);
  std::swap(lent.functions[0], lent.functions[1]);
  cache_.giveBack(std::move(lent));
  ASSERT_TRUE(tu_->reparse(withLinesInFirstBody(kTwo, "  t += 1;\n")));
  analysis::ParsedUnit unit = cache_.build(*tu_, options_);
  EXPECT_EQ(cache_.last().main_reused, 0u);
  expectSameBodies(unit, fresh());
}

// Two definitions with the same text in two classes: reuse must give each its own result
// (key, mangled name, ranges), not the other's.
TEST_F(WalkCacheTest, IdenticalBodiesInTwoClassesKeepTheirOwnResults) {
  const std::string twins = std::string(kMain) + R"src(struct A {
  int n = 0;
  int size() const { return n; }
};
struct B {
  int n = 0;
  int size() const { return n; }
};
int use(const A& a, const B& b) { return a.size() + b.size(); }
)src";
  ASSERT_TRUE(tu_->reparse(twins));
  cache_.build(*tu_, options_);
  ASSERT_TRUE(tu_->reparse(withLinesInFirstBody(twins, "  t += 1;\n")));
  analysis::ParsedUnit unit = cache_.build(*tu_, options_);
  EXPECT_GE(cache_.last().main_reused, 2u);
  expectSameBodies(unit, fresh());
  std::vector<std::string> sizes;
  for (const auto& f : unit.functions)
    if (f.name == "size") sizes.push_back(f.key + " @" + std::to_string(f.range.start.line));
  ASSERT_EQ(sizes.size(), 2u);
  EXPECT_NE(sizes[0].substr(0, sizes[0].find(" @")), sizes[1].substr(0, sizes[1].find(" @")));
}

TEST_F(WalkCacheTest, AChangeOutsideTheBodiesWalksEveryBody) {
  ASSERT_TRUE(tu_->reparse(kTwo));
  cache_.build(*tu_, options_);
  // A new declaration between the two functions (the skeleton changed).
  std::string edited = kTwo;
  edited.insert(edited.find("int second"), "int third(int);\n");
  ASSERT_TRUE(tu_->reparse(edited));
  analysis::ParsedUnit unit = cache_.build(*tu_, options_);
  EXPECT_EQ(cache_.last().main_reused, 0u);
  EXPECT_EQ(cache_.last().main_walked, 2u);
  expectSameBodies(unit, fresh());
}

TEST_F(WalkCacheTest, AConstexprBodyChangeWalksEveryBody) {
  // second's loop count is evaluated from limit()'s body: an edit of that body changes it.
  const std::string text = std::string("#include \"work.h\"\n") +
                           "constexpr int limit() { return 4; }\n"
                           "int second(int k) {\n  for (int i = 0; i < limit(); ++i) k += "
                           "work(i);\n  return k;\n}\n";
  analysis::ParsedUnit unit = buildThenEdit(text, "return 4;", "return 40;");
  EXPECT_EQ(cache_.last().main_reused, 0u);
  expectSameBodies(unit, fresh());
}

// A macro defined inside a body reaches the functions after it: its edit walks them again.
TEST_F(WalkCacheTest, ADirectiveInsideABodyWalksEveryBody) {
  const std::string text = std::string("#include \"work.h\"\n") +
                           "int first(int k) {\n#define STEP work\n  return k;\n}\n"
                           "int second(int k) { return STEP(k); }\n";
  analysis::ParsedUnit unit = buildThenEdit(text, "#define STEP work", "#define STEP other");
  EXPECT_EQ(cache_.last().main_reused, 0u);
  expectSameBodies(unit, fresh());
  bool calls_other = false;
  for (const auto& f : unit.functions)
    for (const auto& n : f.nodes) calls_other |= f.name == "second" && n.call.key == "other(int)";
  EXPECT_TRUE(calls_other) << "second still calls what the old macro named";
}

// A raw string literal whose line reads like a directive is no directive (libclang's tokens say
// so): an edit of the body that holds it keeps the other bodies reused.
TEST_F(WalkCacheTest, ARawStringThatReadsLikeADirectiveKeepsReuse) {
  const std::string text = std::string("#include \"work.h\"\n") +
                           "const char* first(int k) {\n  work(k);\n  return R\"(\n#define STEP "
                           "work\n)\";\n}\n"
                           "int second(int k) { return other(k); }\n";
  analysis::ParsedUnit unit = buildThenEdit(text, "work(k);", "other(k);");
  EXPECT_EQ(cache_.last().main_walked, 1u);
  EXPECT_EQ(cache_.last().main_reused, 1u);
  expectSameBodies(unit, fresh());
}

// The same directive test on a body a macro writes (its range is then found by offsets, not
// from the body's cursor): a directive in the macro's argument still turns reuse off.
TEST_F(WalkCacheTest, ADirectiveInABodyAMacroWritesWalksEveryBody) {
  const std::string text = std::string("#include \"work.h\"\n") +
                           "#define DEFINE(sig, body) sig body\n"
                           "DEFINE(int first(int k), {\n#define STEP work\n  return k;\n})\n"
                           "int second(int k) { return STEP(k); }\n";
  analysis::ParsedUnit unit = buildThenEdit(text, "#define STEP work", "#define STEP other");
  EXPECT_EQ(cache_.last().main_reused, 0u);
  expectSameBodies(unit, fresh());
}

// A class's implicit special members are taken with its text unchanged, moved with it, and made
// again when the class changes.
TEST_F(WalkCacheTest, ImplicitMembersMoveWithTheirClassAndFollowItsChanges) {
  const std::string text = std::string(kTwo) +
                           "struct Box {\n  int n = 0;\n};\n"
                           "struct Plain {\n  int m = 0;\n};\n";
  ASSERT_TRUE(tu_->reparse(text));
  analysis::ParsedUnit first = cache_.build(*tu_, options_);
  size_t implicit = 0;
  for (const auto& f : first.functions) implicit += f.implicit;
  ASSERT_GT(implicit, 0u) << "the test needs implicit members";

  // Two lines more in first(): both classes move down.
  const std::string edited = withLinesInFirstBody(text, "  t += other(t);\n  t -= 1;\n");
  ASSERT_TRUE(tu_->reparse(edited));
  analysis::ParsedUnit unit = cache_.build(*tu_, options_);
  EXPECT_EQ(cache_.last().main_implicit_reused, 2u);
  expectSameBodies(unit, fresh());

  // Box declares its own copy constructor: its implicit members differ, Plain's do not.
  std::string changed = edited;
  changed.insert(changed.find("  int n = 0;"), "  Box() = default;\n  Box(const Box&) {}\n");
  ASSERT_TRUE(tu_->reparse(changed));
  analysis::ParsedUnit after = cache_.build(*tu_, options_);
  expectSameBodies(after, fresh());
  size_t box_before = 0, box_after = 0;
  for (const auto& f : unit.functions) box_before += f.implicit && f.key.rfind("Box::", 0) == 0;
  for (const auto& f : after.functions) box_after += f.implicit && f.key.rfind("Box::", 0) == 0;
  EXPECT_LT(box_after, box_before) << "Box's declared constructors are still implicit";
}

}  // namespace
}  // namespace perfhat::server
