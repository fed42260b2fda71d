// End-to-end: runs scripts/demo.sh with a short load on the binaries of this build (real
// handler processes, the real instrumented sample service, real HTTP on loopback, real libclang)
// and checks what a user sees: measured production values beside the hot calls of
// samples/agile/iteration_service.cc, then, with task T4 applied, a predicted value for the new
// lazily loaded call inside two loops and a regression warning; and the feedback the demo
// recorded gives the same values offline.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>

#include "tests/integration/run_command.h"

namespace {

using perfhat::testing::CommandResult;
using perfhat::testing::runCommand;

struct DemoRun {
  int exit_code = -1;
  std::string output;
};

// Runs the demo in its own process group with a bounded wait; on timeout the whole group is
// terminated (the demo's trap stops the processes it started).
// `dataset`: where the demo records its feedback (never the committed dataset).
DemoRun runDemo(const std::string& log_path, std::chrono::seconds timeout, const char* export_mode,
                const std::string& dataset) {
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    setenv("PERFHAT_DEMO_SKIP_BUILD", "1", 1);
    setenv("PERFHAT_DEMO_BUILD_DIR", PERFHAT_BINARY_DIR, 1);
    setenv("PERFHAT_DEMO_LOAD_S", "12", 1);
    setenv("PERFHAT_DEMO_RATE", "30", 1);
    setenv("PERFHAT_DEMO_DATASET", dataset.c_str(), 1);
    setenv("PERFHAT_DEMO_EXPORT", export_mode, 1);
    const std::string script = std::string(PERFHAT_SOURCE_DIR) + "/scripts/demo.sh";
    const std::string command = "exec bash '" + script + "' > '" + log_path + "' 2>&1";
    execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  DemoRun run;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  while (true) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) {
      run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      break;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      kill(-pid, SIGTERM);
      std::this_thread::sleep_for(std::chrono::seconds(3));
      kill(-pid, SIGKILL);
      waitpid(pid, &status, 0);
      run.exit_code = -2;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  std::ifstream in(log_path);
  std::stringstream text;
  text << in.rdbuf();
  run.output = text.str();
  return run;
}

// The lines of `text` between the line containing `from` and the next line containing `to`.
std::string section(const std::string& text, const std::string& from, const std::string& to) {
  const size_t start = text.find(from);
  if (start == std::string::npos) return {};
  const size_t end = text.find(to, start + from.size());
  return text.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

// The first annotated source line containing `needle` (the demo also lists the patch's added
// lines, prefixed "added:", which carry no annotations).
std::string lineContaining(const std::string& text, const std::string& needle) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.find(needle) != std::string::npos && line.find("added: ") == std::string::npos) {
      return line;
    }
  }
  return {};
}

// A value beside a call, as the annotations print it: "⏱ 465 µs" (measured), "~⏱ 396 µs"
// (predicted); latencies like "12.4 ms", "850 µs", "1.2 s". A call without data shows "⏱ ?", and
// its loop estimate ("≈ 0 ns") is not a measurement.
const std::regex kTimedCall(R"(⏱ [0-9]+(\.[0-9]+)? ?(ns|µs|us|ms|s)\b)");

// Runs the demo with the service exporting `export_mode` and checks its annotated output.
void checkDemo(const char* export_mode) {
  char dir_template[] = "/tmp/perfhat-demo-test-XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  const std::string dataset = dir + "/recorded.feedback.json";
  const DemoRun run = runDemo(dir + "/demo.log", std::chrono::seconds(600), export_mode, dataset);
  // The run's recorded dataset, checked offline (handlers stopped) before the temp dir goes.
  const CommandResult offline =
      runCommand(std::string("'") + PERFHAT_BINARY_DIR + "/server/perfhat-lsp' --check '" +
                 PERFHAT_SOURCE_DIR + "/samples/agile/iteration_service.cc' --feedback-file '" +
                 dataset + "' --compile-commands '" + PERFHAT_BINARY_DIR + "' 2>&1");
  std::filesystem::remove_all(dir);
  ASSERT_EQ(run.exit_code, 0) << run.output;

  const std::string before =
      section(run.output, "(as deployed: production numbers)", "with task T4 applied");
  const std::string after = section(run.output, "with task T4 applied", "== The same data");
  ASSERT_FALSE(before.empty()) << run.output;
  ASSERT_FALSE(after.empty()) << run.output;

  // Measured values beside the hot calls of iterationMetrics, before the change.
  for (const char* hot : {"repository_.storiesInIteration(iteration_id)", "story.tasks()",
                          "repository_.iteration(iteration_id)"}) {
    const std::string line = lineContaining(before, hot);
    EXPECT_TRUE(std::regex_search(line, kTimedCall))
        << hot << " has no latency on: " << line << "\n"
        << before;
  }

  // With T4: the new call carries a value and the function gets a regression warning.
  const std::string call = lineContaining(after, "task.effortSpent()");
  EXPECT_TRUE(std::regex_search(call, kTimedCall)) << call << "\n" << after;
  EXPECT_NE(after.find("warning perfhat.regression"), std::string::npos) << after;
  EXPECT_EQ(before.find("warning perfhat.regression"), std::string::npos) << before;

  // The dataset the demo recorded gives the editor the same measured values without a handler.
  ASSERT_EQ(offline.exit_code, 0) << offline.output;
  const std::string offline_line = lineContaining(offline.output, "story.tasks()");
  EXPECT_TRUE(std::regex_search(offline_line, kTimedCall)) << offline_line << "\n"
                                                           << offline.output;
}

TEST(DemoEndToEnd, ShowsProductionValuesAndTheT4Warning) { checkDemo("spans"); }

// The same loop with libperfhat's aggregate export (histograms to POST /v1/aggregates): the
// handler's merged rows must carry what the spans did (latency, call sites, loops, sizes).
TEST(DemoEndToEnd, AggregateExportGivesTheSameAnnotations) { checkDemo("aggregates"); }

}  // namespace
