#include "experiment/session.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace perfhat::experiment {
namespace {

const std::string kStudy = PERFHAT_SOURCE_DIR "/samples/study/study.json";

Event ev(int64_t t_s, const std::string& type, const std::string& task = "",
         const std::string& source = "keyboard", nlohmann::json detail = nlohmann::json::object()) {
  return Event{t_s * 1000, type, task, source, std::move(detail)};
}

TEST(ExperimentSession, ShortName) {
  EXPECT_EQ(shortName("agile::Task::effortSpent() const"), "effortSpent");
  EXPECT_EQ(shortName("free(int)"), "free");
}

TEST(ExperimentSession, MeasuresFromKeysWithPausesAndAnInterruptionExcluded) {
  const Study study = loadStudy(kStudy);
  const std::vector<Event> log = {
      ev(0, "session_started", "", "runner", {{"participant", "P01"}, {"group", "control"}}),
      ev(10, "task_started", "T1"), ev(70, "task_finished", "T1"),           // T1 total 60 s
      ev(100, "task_started", "T2"), ev(130, "paused"), ev(150, "resumed"),  // 20 s paused
      ev(160, "first_encounter", "T2"),                                      // FE = 60 - 20 = 40 s
      ev(170, "root_cause", "T2"),
      // interrupted here (quit or crash); the runner restarts at 500
      ev(500, "resumed", "", "runner"),
      ev(520, "task_finished", "T2"),  // total = 420 - 20 - 330 = 70 s
  };
  const SessionState s = replay(study, log);
  EXPECT_EQ(s.participant, "P01");
  ASSERT_EQ(s.pauses.size(), 2u);
  const auto rows = sessionMeasurements(study, s);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].task + rows[0].measure, "T1total");
  EXPECT_DOUBLE_EQ(rows[0].seconds, 60);
  EXPECT_EQ(rows[1].task + rows[1].measure, "T2total");
  EXPECT_DOUBLE_EQ(rows[1].seconds, 70);
  EXPECT_EQ(rows[2].measure, "fe");
  EXPECT_DOUBLE_EQ(rows[2].seconds, 40);
  EXPECT_EQ(rows[3].measure, "rca");
  EXPECT_DOUBLE_EQ(rows[3].seconds, 10);
  EXPECT_EQ(measurementsCsv(rows, true),
            "participant,group,task,measure,seconds\nP01,control,T1,total,60.000\n"
            "P01,control,T2,total,70.000\nP01,control,T2,fe,40.000\nP01,control,T2,rca,10.000\n");
}

TEST(ExperimentSession, LanguageServerEventsCountForTheRunningTaskOnly) {
  const Study study = loadStudy(kStudy);
  const nlohmann::json warning = {
      {"text", "Predicted +150 ms per call of candidateStoryIds(): descendantStories() …"}};
  const nlohmann::json hover = {{"text", "descendantStories() ⏱ 52 ms p50"}};
  const std::vector<Event> log = {
      ev(0, "session_started", "", "runner", {{"participant", "P02"}, {"group", "treatment"}}),
      ev(1, "lsp_diagnostic", "", "lsp", warning),  // before the task started: ignored
      ev(5, "task_started", "T2"),
      ev(6, "lsp_hover", "", "lsp", hover),  // before FE: not a root cause yet
      ev(30, "lsp_diagnostic", "", "lsp", {{"text", "unrelated warning on moveStory()"}}),
      ev(45, "lsp_diagnostic", "", "lsp", warning),
      ev(80, "lsp_hover", "", "lsp", hover),
      ev(90, "first_encounter", "T2"),  // later key presses change nothing
      ev(100, "task_finished", "T2"),
      ev(110, "lsp_diagnostic", "", "lsp", warning),  // no task running
  };
  const SessionState s = replay(study, log);
  const TaskProgress& t = s.tasks.at("T2");
  EXPECT_EQ(*t.fe_ms, 45000);
  EXPECT_EQ(t.fe_source, "lsp");
  EXPECT_EQ(*t.rca_ms, 80000);
  EXPECT_EQ(t.rca_source, "lsp");
  EXPECT_TRUE(s.running.empty());
}

TEST(ExperimentSession, EventLogSurvivesATornLastLine) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("perfhat-events-" + std::to_string(::getpid()) + ".jsonl"))
                               .string();
  std::filesystem::remove(path);
  appendEvent(path, ev(1, "task_started", "T1"));
  appendEvent(path, ev(2, "first_encounter", "T1", "lsp", {{"text", "x\ny"}}));
  { std::ofstream(path, std::ios::app) << R"({"t_ms":3,"type":"task_fin)"; }  // crash mid-write
  auto events = loadEvents(path);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1].detail["text"], "x\ny");
  appendEvent(path, ev(4, "task_finished", "T1"));  // cuts the torn line off first
  events = loadEvents(path);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[2].type, "task_finished");
  {
    std::ofstream(path, std::ios::app) << "garbage\n"
                                       << R"({"t_ms":5,"type":"x"})"
                                       << "\n";
  }
  EXPECT_THROW(loadEvents(path), InputError);  // a bad line in the middle is not guessed at
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace perfhat::experiment
