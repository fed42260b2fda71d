// ClangAnalyzer's parse path for an edited document (issue #25, "edits that feel instant"): the
// first build parses and creates a precompiled preamble; each edit after it reparses the same
// translation unit with the unsaved text and reads the headers from that preamble.
#include "server/server/clang_analyzer.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "server/analysis/feedback_view.h"

namespace perfhat::server {
namespace {

namespace fs = std::filesystem;

constexpr const char* kText = R"src(#include <string>
#include <vector>
int total(const std::vector<std::string>& v) {
  int n = 0;
  for (const auto& s : v) n += static_cast<int>(s.size());
  return n;
}
)src";

class ClangAnalyzerEdits : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/perfhat-analyzer-edit-XXXXXX";
    dir_ = mkdtemp(tmpl);
    analyzer_.setBackgroundIndex(false);
    analyzer_.configure(Config(), dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  analysis::SnapshotPtr build(const std::string& path, const std::string& text, int version) {
    std::vector<std::string> warnings;
    return analyzer_.analyze(
        {path, text, version},
        [](const std::vector<std::string>&) {
          return std::make_shared<analysis::InMemoryFeedback>();
        },
        warnings);
  }
  std::string dir_;
  ClangAnalyzer analyzer_;
};

TEST_F(ClangAnalyzerEdits, AnEditReparsesWithThePreambleAndTheUnsavedText) {
  const std::string path = dir_ + "/edited.cc";
  std::ofstream(path) << kText;  // the saved text; the editor's differs from it below
  auto first = build(path, kText, 1);
  ASSERT_TRUE(first);
  EXPECT_FALSE(analyzer_.lastParse(path).reparsed);
  EXPECT_TRUE(analyzer_.lastParse(path).preamble);  // created by the first parse, for the edits

  std::string edited = kText;
  edited += "int twice(const std::vector<std::string>& v) { return 2 * total(v); }\n";
  for (int version = 2; version <= 3; ++version) {
    auto snap = build(path, version == 2 ? edited : std::string(kText), version);
    ASSERT_TRUE(snap);
    EXPECT_TRUE(analyzer_.lastParse(path).reparsed) << "v" << version << " was parsed afresh";
    EXPECT_TRUE(analyzer_.lastParse(path).preamble) << "v" << version << " has no preamble";
    bool has_twice = false;
    for (const auto& f : snap->functions) has_twice |= f.name == "twice";
    EXPECT_EQ(has_twice, version == 2) << "the unsaved text was not the one analysed";
  }
  // libclang parsed on the parse thread (parse_thread.h), once per build.
  EXPECT_EQ(analyzer_.parseThreadRuns(), 3u);
}

// An edit of the includes changes the preamble's region: libclang rebuilds the preamble, and
// the document is still reparsed (same TU), not re-created.
TEST_F(ClangAnalyzerEdits, AnEditOfTheIncludesStillReparses) {
  const std::string path = dir_ + "/includes.cc";
  std::ofstream(path) << kText;
  ASSERT_TRUE(build(path, kText, 1));
  auto snap = build(path, std::string("#include <map>\n") + kText, 2);
  ASSERT_TRUE(snap);
  EXPECT_TRUE(analyzer_.lastParse(path).reparsed);
  EXPECT_TRUE(snap->problems.empty() || !snap->problems.front().error);
}

// A workspace header's bodies are walked at the first build and reused by the edits after it
// (walk_cache.h); the analysis of the edited document is the same either way.
TEST_F(ClangAnalyzerEdits, AnEditWalksTheWorkspaceHeadersOnlyOnce) {
  std::ofstream(dir_ + "/util.h") << "#pragma once\ninline int step(int n) {\n  int s = 0;\n"
                                     "  for (int i = 0; i < n; ++i) s += i;\n  return s;\n}\n";
  const std::string text = "#include \"util.h\"\nint run(int k) { return step(k); }\n";
  const std::string path = dir_ + "/uses_header.cc";
  std::ofstream(path) << text;
  ASSERT_TRUE(build(path, text, 1));
  EXPECT_FALSE(analyzer_.lastHeaderBodies(path).reused);
  EXPECT_EQ(analyzer_.lastHeaderBodies(path).header_walked, 1u);
  auto snap = build(path, text + "int again(int k) { return step(k) + 1; }\n", 2);
  ASSERT_TRUE(snap);
  EXPECT_TRUE(analyzer_.lastHeaderBodies(path).reused);
  EXPECT_EQ(analyzer_.lastHeaderBodies(path).header_walked, 0u);
  EXPECT_EQ(analyzer_.lastHeaderBodies(path).header_bodies, 1u);
  ASSERT_EQ(snap->functions.size(), 2u);
  for (const auto& f : snap->functions) {
    ASSERT_GE(f.nodes.size(), 2u) << f.name;
    EXPECT_TRUE(f.nodes[1].call.in_workspace) << f.name << ": step's body is not known";
  }
}

// An editor that opens a whole project must not make the server hold a translation unit per file
// (about 100 MB each with heavy headers): beyond maxParsedDocuments the least recently built
// documents give theirs up. One that gave it up is parsed afresh at its next build, with the
// same result; the ones still held reparse.
TEST_F(ClangAnalyzerEdits, OnlyTheMostRecentlyBuiltDocumentsKeepATranslationUnit) {
  Config cfg;
  cfg.max_parsed_documents = 2;
  analyzer_.configure(cfg, dir_);
  std::vector<std::string> paths;
  std::vector<size_t> functions;
  for (int i = 0; i < 3; ++i) {
    paths.push_back(dir_ + "/open" + std::to_string(i) + ".cc");
    const std::string text = kText + std::string("int f") + std::to_string(i) + "() { return " +
                             std::to_string(i) + "; }\n";
    std::ofstream(paths.back()) << text;
    auto snap = build(paths.back(), text, 1);
    ASSERT_TRUE(snap);
    functions.push_back(snap->functions.size());
    EXPECT_LE(analyzer_.parsedDocuments(), 2u) << "after opening " << i + 1;
  }
  EXPECT_EQ(analyzer_.parsedDocuments(), 2u);
  EXPECT_FALSE(analyzer_.lastParse(paths[0]).preamble) << "the least recent still holds its unit";
  EXPECT_TRUE(analyzer_.lastParse(paths[2]).preamble);

  const std::string text0 = kText + std::string("int f0() { return 0; }\n");
  auto again = build(paths[0], text0, 2);
  ASSERT_TRUE(again);
  EXPECT_FALSE(analyzer_.lastParse(paths[0]).reparsed) << "a released unit cannot be reparsed";
  // Its last inference went with its unit: everything is inferred again.
  EXPECT_EQ(analyzer_.lastInference(paths[0]).reused, 0u);
  EXPECT_EQ(analyzer_.lastInference(paths[0]).all_analysed_because,
            analysis::NoReuse::UnitReleased);
  EXPECT_EQ(noReuseText(analysis::NoReuse::UnitReleased), "its translation unit was released");
  EXPECT_EQ(again->functions.size(), functions[0]);
  EXPECT_EQ(analyzer_.parsedDocuments(), 2u);
  EXPECT_FALSE(analyzer_.lastParse(paths[1]).preamble) << "now open1 is the least recent";

  const std::string text2 = kText + std::string("int f2() { return 2; }\n");
  ASSERT_TRUE(build(paths[2], text2, 2));
  EXPECT_TRUE(analyzer_.lastParse(paths[2]).reparsed) << "a held unit is reparsed";

  cfg.max_parsed_documents = 1;  // lowering the limit releases at once
  analyzer_.configure(cfg, dir_);
  EXPECT_EQ(analyzer_.parsedDocuments(), 1u);
  EXPECT_TRUE(analyzer_.lastParse(paths[2]).preamble) << "the most recent one is kept";
  ASSERT_TRUE(build(paths[0], text0, 3));
  EXPECT_EQ(analyzer_.lastInference(paths[0]).all_analysed_because,
            analysis::NoReuse::UnitReleased);
}

}  // namespace
}  // namespace perfhat::server
