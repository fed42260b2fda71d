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

}  // namespace
}  // namespace perfhat::server
