// `perfhat-experiment deploy` for real: a scripted participant's session prepares T1's copy of
// the sample (the real `run`), the participant's change (T1's reference patch) is built with the
// study's build, started instrumented against a real perfhat-handler, driven by the sample
// workload for a couple of seconds, and the response times are printed; the handler receives
// the copy's calls under its own service version. A copy that does not compile is refused with
// the compiler's message and nothing is started.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "tests/integration/handler_process.h"
#include "tests/integration/handler_test_util.h"

namespace perfhat::experiment {
namespace {

namespace fs = std::filesystem;
using perfhat::testing::HandlerProcess;
using perfhat::testing::TempDir;

constexpr const char* kToken = "deploy-token";

std::string slurp(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// Runs `cmd` through the shell with `keys` on stdin; the exit code.
int shell(const std::string& cmd, const std::string& keys = "") {
  FILE* p = popen(cmd.c_str(), "w");
  if (!p) return -1;
  fwrite(keys.data(), 1, keys.size(), p);
  const int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string deployCommand(const fs::path& session, const std::string& handler) {
  return std::string(PERFHAT_EXPERIMENT_BIN) + " deploy --session " + session.string() +
         " --build " + PERFHAT_BINARY_DIR + " --duration 2 --rate 10 --workers 2" +
         (handler.empty() ? "" : " --handler " + handler + " --token " + kToken);
}

TEST(ExperimentDeploy, BuildsTheParticipantsCopyRunsTheWorkloadAndPrintsResponseTimes) {
  TempDir dir("deploy");
  HandlerProcess handler({"--mode", "deployed", "--store", dir / "h.sqlite", "--token", kToken});
  const fs::path session = dir.path() / "session";
  // The participant reads T1's briefing and starts it (Enter), then quits for now.
  ASSERT_EQ(shell(std::string(PERFHAT_EXPERIMENT_BIN) + " run --study " + PERFHAT_SOURCE_DIR +
                      "/samples/study/study.json --seed 1 --participant P03 --session " +
                      session.string() + " > " + (dir / "run.out") + " 2>&1",
                  "\nq\n"),
            0)
      << slurp(dir / "run.out");
  const fs::path copy = session / "T1" / "samples" / "agile";
  ASSERT_TRUE(fs::exists(copy / "story_service.cc"));
  // The participant's change: T1's reference solution.
  ASSERT_EQ(shell("cd " + (session / "T1").string() + " && patch -s -p1 < " + PERFHAT_SOURCE_DIR +
                  "/samples/tasks/T1/reference.patch"),
            0);

  const std::string out = dir / "deploy.out", err = dir / "deploy.err";
  ASSERT_EQ(shell(deployCommand(session, handler.url()) + " > " + out + " 2> " + err), 0)
      << slurp(out) << slurp(err);
  const std::string table = slurp(out), progress = slurp(err);
  EXPECT_NE(table.find("Response times of the deployed T1 copy"), std::string::npos) << table;
  EXPECT_NE(table.find("| endpoint | requests | errors | mean ms | p50 ms | p99 ms |"),
            std::string::npos);
  EXPECT_NE(table.find("| GET /products |"), std::string::npos) << table;
  // Only what the change touched was compiled; the rest came from the study's build.
  EXPECT_NE(progress.find("story_service.cc"), std::string::npos) << progress;
  EXPECT_EQ(progress.find("] 1/1 database.cc"), std::string::npos) << progress;
  EXPECT_NE(progress.find("unchanged since the study's build"), std::string::npos) << progress;
  EXPECT_NE(progress.find("[workload] done:"), std::string::npos) << progress;  // progress shown
  const auto report =
      nlohmann::json::parse(slurp(session / "T1" / ".deploy" / "response-times.json"));
  EXPECT_GT(report["ok"].get<int>(), 0);

  // The copy ran instrumented against the study's handler, under its own version.
  auto c = perfhat::testing::client(handler.url(), kToken);
  bool seen = false;
  for (int i = 0; i < 100 && !seen; ++i) {
    auto res = c.Get("/v1/changes?since=0");
    seen = res && res->status == 200 && res->body.find("agile::") != std::string::npos;
    if (!seen) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(seen) << "the handler received no calls of the deployed copy";

  // A change that does not compile: a clear error, exit code 1, nothing deployed.
  std::ofstream(copy / "story_service.cc", std::ios::app) << "\nthis is not C++;\n";
  EXPECT_EQ(shell(deployCommand(session, "") + " > " + out + " 2> " + err), 1);
  const std::string failed = slurp(err);
  EXPECT_NE(failed.find("the build of the changed sample failed"), std::string::npos) << failed;
  EXPECT_NE(failed.find("story_service.cc"), std::string::npos) << failed;
  EXPECT_NE(failed.find("error"), std::string::npos) << failed;  // the compiler's message
  EXPECT_EQ(failed.find("starting the changed service"), std::string::npos) << failed;
  EXPECT_EQ(slurp(out).find("Response times"), std::string::npos);
  // Both deploys are in the session's log (raw data), the failed one marked as such.
  const std::string log = slurp(session / "events.jsonl");
  EXPECT_NE(log.find(R"("ok":true)"), std::string::npos) << log;
  EXPECT_NE(log.find(R"("reason":"build failed")"), std::string::npos) << log;
}

TEST(ExperimentDeploy, RefusesACopyOutsideTheSamplesPath) {
  TempDir dir("deploy-bad");
  fs::create_directories(dir.path() / "elsewhere");
  const std::string err = dir / "err";
  EXPECT_EQ(shell(std::string(PERFHAT_EXPERIMENT_BIN) + " deploy --copy " + (dir / "elsewhere") +
                  " --build " + PERFHAT_BINARY_DIR + " 2> " + err),
            2);
  EXPECT_NE(slurp(err).find("must keep the sample's path"), std::string::npos) << slurp(err);
}

}  // namespace
}  // namespace perfhat::experiment
