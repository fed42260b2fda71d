// The overhead study's measurement loop against the real perfhat-lsp, on a one-file project
// (the figures themselves are measured by hand and recorded in bench/README.md).
#include "experiment/overhead.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "experiment/measurements.h"

namespace perfhat::experiment {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

TEST(ExperimentOverhead, CompileDatabaseFilesAreExistingAndUnique) {
  const fs::path dir = fs::temp_directory_path() / ("perfhat-ovh-db-" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "a.cc") << "int a() { return 1; }\n";
  const std::string d = dir.string(), a = (dir / "a.cc").string();
  std::ofstream(dir / "compile_commands.json")
      << json::array({{{"directory", d}, {"file", "a.cc"}, {"command", "c++ -c a.cc"}},
                      {{"directory", d}, {"file", a}, {"command", "c++ -O2 -c a.cc"}},
                      {{"directory", d}, {"file", "gone.cc"}, {"command", "c++ -c gone.cc"}}})
             .dump();
  EXPECT_EQ(compileDatabaseFiles(d), std::vector<std::string>{a});
  std::ofstream(dir / "compile_commands.json") << "[]";
  EXPECT_THROW(compileDatabaseFiles(d), InputError);
  fs::remove_all(dir);
}

TEST(ExperimentOverhead, MeasuresEveryScenarioThroughTheRealServer) {
  const fs::path dir = fs::temp_directory_path() / ("perfhat-ovh-" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "a.cc") << "int slow(int n);\nint total(int n) {\n  int s = 0;\n"
                                 "  for (int i = 0; i < n; ++i) s += slow(i);\n  return s;\n}\n";
  std::ofstream(dir / "compile_commands.json")
      << json::array({{{"directory", dir.string()},
                       {"file", (dir / "a.cc").string()},
                       {"command", "c++ -std=c++20 -c a.cc"}}})
             .dump();
  OverheadOptions o;
  o.name = "one file";
  o.compile_commands = dir.string();
  o.server = {PERFHAT_LSP_BIN};
  o.repeat = 2;
  o.full_repeat = 1;
  o.out_dir = (dir / "out").string();
  std::ostringstream progress;
  const auto r = measureOverhead(o, progress);
  EXPECT_EQ(r["files"], 1);
  EXPECT_EQ(r["full_repeat"], 1);
  const auto scenarios = overheadScenarios(true);
  ASSERT_EQ(scenarios.size(), 8u);
  for (const auto& k : scenarios) {
    const size_t n = k.rfind("full", 0) == 0 ? 1u : 2u;
    ASSERT_EQ(r["seconds"][k].size(), n) << k;
    ASSERT_EQ(r["cpu_seconds"][k].size(), n) << k;
    for (const auto& v : r["cpu_seconds"][k]) EXPECT_GE(v.get<double>(), 0) << k;
    for (const auto& v : r["seconds"][k]) EXPECT_GT(v.get<double>(), 0) << k;
    EXPECT_LE(r["summary"][k]["min"].get<double>(), r["summary"][k]["median"].get<double>());
  }
  EXPECT_NE(progress.str().find("[one file 2/2, no cache] single cold"), std::string::npos);
  EXPECT_EQ(overheadScenarios(false).size(), 4u);
  // A cold start parses the file: the server has used some CPU by then.
  EXPECT_GT(r["cpu_summary"]["single_cold"]["max"].get<double>(), 0);
  // Every pass is written as soon as it is measured (an interrupted study keeps it): the file
  // already holds the last pass, before any caller writes the result.
  const auto partial = json::parse(readBoundedFile((dir / "out" / "overhead.json").string()));
  EXPECT_EQ(partial["seconds"], r["seconds"]);
  EXPECT_EQ(partial["seconds"]["single_warm_nocache"].size(), 2u);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace perfhat::experiment
