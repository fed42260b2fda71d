// perfhat-experiment run with a scripted participant: the real binary, its stdin fed the keys a
// participant would press, interrupted after T2's first encounter, then resumed; T2's root cause
// comes from a language-server event (as lsp-proxy writes it), T4's from keys.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "experiment/event_log.h"
#include "experiment/measurements.h"

namespace perfhat::experiment {
namespace {

namespace fs = std::filesystem;

int runWithKeys(const fs::path& session, const std::string& keys, const std::string& log) {
  const std::string cmd = std::string(PERFHAT_EXPERIMENT_BIN) + " run --study " +
                          PERFHAT_SOURCE_DIR
                          "/samples/study/study.json --seed 1 --participant "
                          "P03 --session " +
                          session.string() + " > " + log + " 2>&1";
  FILE* p = popen(cmd.c_str(), "w");
  if (!p) return -1;
  fwrite(keys.data(), 1, keys.size(), p);
  const int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string slurp(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

TEST(ExperimentRun, ScriptedParticipantInterruptedAndResumed) {
  const fs::path dir = fs::temp_directory_path() / ("perfhat-run-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  // T1: start, done. T2: start, first encounter (key), quit.
  ASSERT_EQ(runWithKeys(dir, "\nd\n\nf\nq\n", (dir.string() + ".out1")), 0)
      << slurp(dir.string() + ".out1");
  const std::string out1 = slurp(dir.string() + ".out1");
  EXPECT_NE(out1.find("T1 — Defer stories"), std::string::npos) << out1;  // the briefing
  EXPECT_NE(out1.find("session interrupted"), std::string::npos);
  // Fresh copies where the includes ("samples/agile/…") resolve, with a compile database.
  EXPECT_TRUE(fs::exists(dir / "T1" / "samples" / "agile" / "planning_service.cc"));
  EXPECT_TRUE(fs::exists(dir / "T2" / "samples" / "agile" / "planning_service.cc"));
  const auto db = nlohmann::json::parse(slurp(dir / "T2" / "compile_commands.json"));
  ASSERT_FALSE(db.empty());
  EXPECT_NE(db[0]["command"].get<std::string>().find("-I" + fs::absolute(dir / "T2").string()),
            std::string::npos);
  EXPECT_FALSE(fs::exists(dir / "T3"));

  // The participant hovers the culprit call in the editor; lsp-proxy logs the hover.
  appendEvent((dir / "events.jsonl").string(),
              Event{nowMs(),
                    "lsp_hover",
                    "",
                    "lsp",
                    {{"text", "descendantStories() ⏱ 52 ms p50 · 40 calls/min"}}});

  // Resume: T2 done; T3 start, done; T4 start, FE, RCA, done.
  ASSERT_EQ(runWithKeys(dir, "d\n\nd\n\nf\nr\nd\n", dir.string() + ".out2"), 0)
      << slurp(dir.string() + ".out2");
  const std::string out2 = slurp(dir.string() + ".out2");
  EXPECT_NE(out2.find("resuming the session of P03"), std::string::npos) << out2;
  EXPECT_EQ(out2.find("T1 — Defer stories"), std::string::npos);  // T1 is not shown again

  // T2's RCA can only have come from the language-server event: no 'r' was pressed in T2.
  const std::string csv = slurp(dir / "measurements.csv");
  const auto rows = parseMeasurementsCsv(csv, "measurements.csv");
  std::vector<std::string> got;
  for (const auto& r : rows) got.push_back(r.task + " " + r.measure);
  EXPECT_EQ(got, (std::vector<std::string>{"T1 total", "T2 total", "T2 fe", "T2 rca", "T3 total",
                                           "T4 total", "T4 fe", "T4 rca"}))
      << csv;
  const auto events = loadEvents((dir / "events.jsonl").string());
  int resumed = 0;
  for (const auto& e : events) resumed += e.type == "resumed";
  EXPECT_EQ(resumed, 1);
  EXPECT_EQ(events.back().type, "session_finished");
  // Running again after the end changes nothing and prints the measurements.
  ASSERT_EQ(runWithKeys(dir, "", dir.string() + ".out3"), 0);
  EXPECT_EQ(loadEvents((dir / "events.jsonl").string()).size(), events.size());
  fs::remove_all(dir);
  fs::remove(dir.string() + ".out1");
  fs::remove(dir.string() + ".out2");
  fs::remove(dir.string() + ".out3");
}

}  // namespace
}  // namespace perfhat::experiment
