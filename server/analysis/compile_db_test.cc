#include "server/analysis/compile_db.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
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

TEST_F(CompileDbTest, IllTypedFieldsAreSkippedNotFatal) {
  write(dir_ / "compile_commands.json",
        R"([42, {"file": 3}, {"file": ")" + path("src/a.cc") +
            R"(", "directory": 5, "arguments": ["cc", 7, "-DOK", null]},
            {"file": ")" +
            path("src/b.cc") + R"(", "arguments": "not a list", "command": 9}])");
  CompileCommand a = compileCommandFor(path("src/a.cc"), "", {});
  EXPECT_EQ(a.source, CompileCommand::Source::Exact);
  EXPECT_TRUE(a.error.empty()) << a.error;
  EXPECT_THAT(a.args, Contains("-DOK"));
  EXPECT_EQ(a.directory, "");  // the number is not a directory
  // b.cc's entry has no usable command: it borrows a.cc's flags.
  EXPECT_EQ(compileCommandFor(path("src/b.cc"), "", {}).source, CompileCommand::Source::Sibling);
}

TEST_F(CompileDbTest, KeptWhileUnchangedReReadWhenChanged) {
  const fs::path db = dir_ / "compile_commands.json";
  auto entry = [&](const std::string& define) {
    return R"([{"directory": "/", "file": ")" + path("src/a.cc") + R"(", "arguments": ["cc", ")" +
           define + R"("]}])";
  };
  const auto an_hour_ago = fs::file_time_type::clock::now() - std::chrono::hours(1);
  write(db, entry("-DONE"));
  fs::last_write_time(db, an_hour_ago);
  EXPECT_THAT(compileCommandFor(path("src/a.cc"), "", {}).args, Contains("-DONE"));

  // Same size, same time: the parsed database is kept (this is what makes lookups cheap).
  write(db, entry("-DTWO"));
  fs::last_write_time(db, an_hour_ago);
  EXPECT_THAT(compileCommandFor(path("src/a.cc"), "", {}).args, Contains("-DONE"));

  // A new modification time: read again.
  fs::last_write_time(db, an_hour_ago + std::chrono::minutes(1));
  EXPECT_THAT(compileCommandFor(path("src/a.cc"), "", {}).args, Contains("-DTWO"));

  // Just written, twice within the same moment and with the same size: both writes are seen,
  // because a database this fresh is never served from the cache.
  write(db, entry("-DTRI"));
  EXPECT_THAT(compileCommandFor(path("src/a.cc"), "", {}).args, Contains("-DTRI"));
  write(db, entry("-DFOR"));
  EXPECT_THAT(compileCommandFor(path("src/a.cc"), "", {}).args, Contains("-DFOR"));

  // Deleted: the fallback, not the cached flags.
  fs::remove(db);
  EXPECT_TRUE(compileCommandFor(path("src/a.cc"), "", {}).missing);
}

TEST(CompileDatabaseTest, ParsesTextAndPrefersExactThenSameDirectoryThenSameExtension) {
  CompileDatabase db = CompileDatabase::parse(R"([
    {"directory": "/p", "file": "/p/x/one.c", "arguments": ["cc", "-DC"]},
    {"directory": "/p", "file": "/p/y/two.cc", "arguments": ["c++", "-DY"]},
    {"directory": "/p", "file": "/p/x/three.cc", "arguments": ["c++", "-DX"]},
    {"directory": "/p", "file": "/p/x/three.cc", "arguments": ["c++", "-DSECOND"]}
  ])",
                                              "/p/compile_commands.json");
  EXPECT_EQ(db.size(), 4u);
  EXPECT_TRUE(db.error().empty());
  EXPECT_THAT(db.commandFor("/p/x/three.cc").args, Contains("-DX"));  // the first entry wins
  EXPECT_THAT(db.commandFor("/p/x/four.cc").args, Contains("-DX"));   // same directory
  EXPECT_THAT(db.commandFor("/p/z/five.cc").args, Contains("-DY"));   // same extension
  EXPECT_THAT(db.commandFor("/p/z/six.rs").args, Contains("-DC"));    // anything
  EXPECT_EQ(db.commandFor("/p/z/six.rs").database, "/p/compile_commands.json");
  EXPECT_THAT(db.files(), ElementsAre("/p/x/one.c", "/p/x/three.cc", "/p/y/two.cc"));

  CompileDatabase bad = CompileDatabase::parse("{\"file\": 1}", "db.json");
  EXPECT_EQ(bad.size(), 0u);
  EXPECT_THAT(bad.error(), ::testing::HasSubstr("db.json: not a JSON array"));
  EXPECT_TRUE(bad.commandFor("/a.cc").missing);
  EXPECT_THAT(CompileDatabase::parse("[]", "e.json").commandFor("/a.cc").error,
              ::testing::HasSubstr("no usable entry"));
  EXPECT_THAT(CompileDatabase::load("/nonexistent/compile_commands.json").error(),
              ::testing::HasSubstr("/nonexistent/compile_commands.json: cannot be read"));
}

TEST(SplitCommandLineTest, QuotesAndEscapes) {
  EXPECT_THAT(splitCommandLine(R"(c++  -DA="x y" '-DB=a b' -DC=\"q\" file.cc)"),
              ElementsAre("c++", "-DA=x y", "-DB=a b", "-DC=\"q\"", "file.cc"));
  EXPECT_THAT(splitCommandLine(""), ElementsAre());
}

}  // namespace
}  // namespace perfhat::analysis
