// The call-graph file (Graphviz where installed, dot text otherwise) and the hover section's
// place beside the analysis' hover.
#include "server/server/dynamic_view.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace perfhat::server {
namespace {

namespace fs = std::filesystem;

constexpr const char* kDot = "digraph g { \"a()\" -> \"b()\" [label=\"3\"]; }\n";

struct TempDir {
  fs::path path;
  TempDir() {
    char tmpl[] = "/tmp/perfhat-callgraph-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

std::string read(const std::string& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), {}};
}

bool haveDot() { return std::system("command -v dot >/dev/null 2>&1") == 0; }

TEST(LspCallGraphFile, RenderedToSvgWhereGraphvizIsInstalled) {
  if (!haveDot()) GTEST_SKIP() << "Graphviz dot not installed (scripts/install-deps.sh has it)";
  TempDir d;
  CallGraphFile f = writeCallGraph("a()", kDot, (d.path / "graphs").string());
  ASSERT_TRUE(f.error.empty()) << f.error;
  EXPECT_EQ(f.format, "svg") << f.note;
  EXPECT_EQ(fs::path(f.path).extension(), ".svg");
  const std::string svg = read(f.path);
  EXPECT_NE(svg.find("<svg"), std::string::npos);
  EXPECT_NE(svg.find("b()"), std::string::npos);
  // The same function is written to the same file again.
  EXPECT_EQ(writeCallGraph("a()", kDot, (d.path / "graphs").string()).path, f.path);
}

TEST(LspCallGraphFile, DotTextWithoutGraphviz) {
  TempDir d;
  const std::string old_path = std::getenv("PATH") ? std::getenv("PATH") : "";
  setenv("PATH", d.path.c_str(), 1);  // an empty directory: no `dot`
  CallGraphFile f = writeCallGraph("a()", kDot, d.path.string());
  setenv("PATH", old_path.c_str(), 1);
  ASSERT_TRUE(f.error.empty()) << f.error;
  EXPECT_EQ(f.format, "dot");
  EXPECT_NE(f.note.find("not available"), std::string::npos) << f.note;
  EXPECT_EQ(read(f.path), kDot);
}

TEST(LspCallGraphFile, UnwritableDirectoryIsAnError) {
  CallGraphFile f = writeCallGraph("a()", kDot, "/proc/perfhat-no/such");
  EXPECT_FALSE(f.error.empty());
  EXPECT_TRUE(f.path.empty());
}

TEST(LspDynamicHover, BelowTheAnalysisHoverOrAlone) {
  analysis::Snapshot s;
  analysis::FunctionInfo f;
  f.key = "a()";
  f.name_range = {{3, 4}, {3, 5}};
  s.functions.push_back(f);
  auto view = std::make_shared<features::DynamicView>();
  DynamicMetrics m;
  m.key = "a()";
  m.window_to_s = 3600;
  m.visits = 3;
  m.callers = {{"main()", 3}};
  m.fan_in = 1;
  view->by_key["a()"] = m;
  view->definitions["main()"] = {"/src/main file.cc", 9};

  std::optional<features::HoverResult> h;
  appendDynamicHover(h, s, {3, 4}, view, true);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->range, f.name_range);
  EXPECT_NE(h->markdown.find("[`main()`](file:///src/main%20file.cc#L10) — 3 calls"),
            std::string::npos)
      << h->markdown;

  h = features::HoverResult{f.name_range, "analysis"};
  appendDynamicHover(h, s, {3, 4}, view, true);
  EXPECT_EQ(h->markdown.rfind("analysis\n\n---\n\n**Production call graph**", 0), 0u)
      << h->markdown;

  std::optional<features::HoverResult> none;
  appendDynamicHover(none, s, {7, 0}, view, true);  // not on a function's name
  EXPECT_FALSE(none);
  appendDynamicHover(none, s, {3, 4}, nullptr, true);  // no view (before the first build)
  EXPECT_FALSE(none);
}

}  // namespace
}  // namespace perfhat::server
