#include "server/analysis/compile_db.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace perfhat::analysis {
namespace {
namespace fs = std::filesystem;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::Not;

class CompileDbTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "perfhat-cdb-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    fs::create_directories(dir_ / "src" / "deep");
    fs::create_directories(dir_ / "build");
  }
  void TearDown() override { fs::remove_all(dir_); }
  void write(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }
  std::string path(const std::string& rel) { return (dir_ / rel).string(); }
  fs::path dir_;
};

TEST_F(CompileDbTest, ExactEntryFoundUpwardInBuildDir) {
  write(dir_ / "build" / "compile_commands.json", R"([
    {"directory": ")" + path("build") + R"(", "file": ")" +
                                                      path("src/a.cc") + R"(",
     "arguments": ["/usr/bin/c++", "-DA=1", "-I../include", "-std=c++17", "-c", ")" +
                                                      path("src/a.cc") + R"(", "-o", "a.o"]},
    {"directory": ")" + path("build") + R"(", "file": "../src/b.cc",
     "command": "c++ -DB=\"two words\" -O2 -c ../src/b.cc -o b.o"}
  ])");
  CompileCommand a = compileCommandFor(path("src/a.cc"), "", {"-std=c++20"});
  EXPECT_FALSE(a.missing);
  EXPECT_EQ(a.source, CompileCommand::Source::Exact);
  EXPECT_EQ(a.database, path("build/compile_commands.json"));
  EXPECT_THAT(a.args, Contains("-DA=1"));
  EXPECT_THAT(a.args, Contains("-I../include"));
  EXPECT_THAT(a.args, Contains("-working-directory=" + path("build")));
  EXPECT_THAT(a.args, Not(Contains("-c")));
  EXPECT_THAT(a.args, Not(Contains("a.o")));
  EXPECT_THAT(a.args, Not(Contains(path("src/a.cc"))));
  EXPECT_THAT(a.args, Contains("-resource-dir"));

  // "command" form with a relative file and shell quoting.
  CompileCommand b = compileCommandFor(path("src/b.cc"), "", {});
  EXPECT_EQ(b.source, CompileCommand::Source::Exact);
  EXPECT_THAT(b.args, Contains("-DB=two words"));
  EXPECT_THAT(b.args, Not(Contains("../src/b.cc")));

  // A file without its own entry borrows a sibling's flags; a header also gets -xc++.
  CompileCommand c = compileCommandFor(path("src/deep/c.cc"), "", {});
  EXPECT_EQ(c.source, CompileCommand::Source::Sibling);
  EXPECT_THAT(c.args, Contains("-DA=1"));
  CompileCommand h = compileCommandFor(path("src/a.h"), "", {});
  EXPECT_EQ(h.source, CompileCommand::Source::Sibling);
  EXPECT_THAT(h.args, Contains("-xc++"));
}

TEST_F(CompileDbTest, ConfiguredDirectoryOrFile) {
  fs::create_directories(dir_ / "elsewhere");
  write(
      dir_ / "elsewhere" / "compile_commands.json",
      R"([{"directory": "/", "file": ")" + path("src/a.cc") + R"(", "arguments": ["cc", "-DX"]}])");
  EXPECT_EQ(findCompileDatabase(path("src/a.cc"), path("elsewhere")),
            path("elsewhere/compile_commands.json"));
  EXPECT_EQ(findCompileDatabase(path("src/a.cc"), path("elsewhere/compile_commands.json")),
            path("elsewhere/compile_commands.json"));
  EXPECT_EQ(findCompileDatabase(path("src/a.cc"), path("nowhere")), "");
  EXPECT_THAT(compileCommandFor(path("src/a.cc"), path("elsewhere"), {}).args, Contains("-DX"));
}

TEST_F(CompileDbTest, MissingDatabaseUsesFallbackAndSaysSo) {
  CompileCommand c =
      compileCommandFor(path("src/deep/x.cc"), path("nowhere"), {"-std=c++20", "-xc++"});
  EXPECT_TRUE(c.missing);
  EXPECT_EQ(c.source, CompileCommand::Source::Fallback);
  EXPECT_THAT(c.args, Contains("-std=c++20"));
  EXPECT_THAT(c.args, Contains("-I" + path("src/deep")));
  EXPECT_THAT(c.args, Contains("-resource-dir"));
}

TEST_F(CompileDbTest, MalformedDatabaseFallsBackWithError) {
  write(dir_ / "compile_commands.json", "{ not json");
  CompileCommand c = compileCommandFor(path("src/a.cc"), "", {"-std=c++20"});
  EXPECT_TRUE(c.missing);
  EXPECT_THAT(c.error, ::testing::HasSubstr("compile_commands.json"));
  EXPECT_THAT(c.args, Contains("-std=c++20"));
}

TEST(SplitCommandLineTest, QuotesAndEscapes) {
  EXPECT_THAT(splitCommandLine(R"(c++  -DA="x y" '-DB=a b' -DC=\"q\" file.cc)"),
              ElementsAre("c++", "-DA=x y", "-DB=a b", "-DC=\"q\"", "file.cc"));
  EXPECT_THAT(splitCommandLine(""), ElementsAre());
}

}  // namespace
}  // namespace perfhat::analysis
