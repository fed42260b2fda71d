#include "experiment/session.h"

#include <cstdio>

namespace perfhat::experiment {

std::string shortName(const std::string& key) {
  std::string s = key.substr(0, key.find('('));
  const auto colon = s.rfind("::");
  return colon == std::string::npos ? s : s.substr(colon + 2);
}

namespace {

bool mentions(const nlohmann::json& detail, const std::string& key) {
  if (key.empty()) return false;
  const std::string name = shortName(key) + "(";
  const std::string text = detail.value("text", "");
  return !shortName(key).empty() && text.find(name) != std::string::npos;
}

const StudyTask* findTask(const Study& study, const std::string& id) {
  for (const auto& t : study.tasks) {
    if (t.id == id) return &t;
  }
  return nullptr;
}

}  // namespace

SessionState replay(const Study& study, const std::vector<Event>& events) {
  SessionState s;
  int64_t previous = 0, pause_start = 0;
  for (const Event& e : events) {
    if (e.type == "session_started") {
      s.participant = e.detail.value("participant", "");
      s.group = e.detail.value("group", "");
    } else if (e.type == "paused") {
      if (!s.paused) pause_start = e.t_ms;
      s.paused = true;
    } else if (e.type == "resumed") {
      // From the explicit pause, or from the last event before an interruption.
      const int64_t from = s.paused ? pause_start : previous;
      if (from && e.t_ms > from) s.pauses.emplace_back(from, e.t_ms);
      s.paused = false;
    } else if (e.type == "session_finished") {
      s.finished = true;
    } else if (!e.task.empty() && findTask(study, e.task)) {
      TaskProgress& t = s.tasks[e.task];
      if (e.type == "task_prepared") {
        t.prepared = true;
      } else if (e.type == "task_started" && !t.started_ms) {
        t.started_ms = e.t_ms;
        s.running = e.task;
      } else if (e.type == "first_encounter" && t.started_ms && !t.fe_ms && !t.finished_ms) {
        t.fe_ms = e.t_ms;
        t.fe_source = e.source;
      } else if (e.type == "root_cause" && t.fe_ms && !t.rca_ms && !t.finished_ms) {
        t.rca_ms = e.t_ms;
        t.rca_source = e.source;
      } else if (e.type == "task_finished" && t.started_ms && !t.finished_ms) {
        t.finished_ms = e.t_ms;
        if (s.running == e.task) s.running.clear();
      }
    } else if ((e.type == "lsp_diagnostic" || e.type == "lsp_hover") && !s.running.empty()) {
      const StudyTask* task = findTask(study, s.running);
      TaskProgress& t = s.tasks[s.running];
      if (task && task->type == "performance") {
        if (e.type == "lsp_diagnostic" && !t.fe_ms && mentions(e.detail, task->function)) {
          t.fe_ms = e.t_ms;
          t.fe_source = "lsp";
        } else if (e.type == "lsp_hover" && t.fe_ms && !t.rca_ms &&
                   mentions(e.detail, task->culprit)) {
          t.rca_ms = e.t_ms;
          t.rca_source = "lsp";
        }
      }
    }
    previous = e.t_ms;
  }
  return s;
}

double activeSeconds(const SessionState& s, int64_t from_ms, int64_t to_ms) {
  int64_t active = to_ms - from_ms;
  for (const auto& [a, b] : s.pauses) {
    const int64_t lo = std::max(a, from_ms), hi = std::min(b, to_ms);
    if (hi > lo) active -= hi - lo;
  }
  return static_cast<double>(std::max<int64_t>(active, 0)) / 1000.0;
}

std::vector<Observation> sessionMeasurements(const Study& study, const SessionState& s) {
  std::vector<Observation> rows;
  for (const auto& task : study.tasks) {
    const auto it = s.tasks.find(task.id);
    if (it == s.tasks.end() || !it->second.started_ms || !it->second.finished_ms) continue;
    const TaskProgress& t = it->second;
    auto add = [&](const char* measure, double seconds) {
      rows.push_back({s.participant, s.group, task.id, measure, seconds, 0});
    };
    add("total", activeSeconds(s, *t.started_ms, *t.finished_ms));
    if (task.type != "performance") continue;
    if (t.fe_ms) add("fe", activeSeconds(s, *t.started_ms, *t.fe_ms));
    if (t.fe_ms && t.rca_ms) add("rca", activeSeconds(s, *t.fe_ms, *t.rca_ms));
  }
  return rows;
}

std::string measurementsCsv(const std::vector<Observation>& rows, bool header) {
  std::string out = header ? "participant,group,task,measure,seconds\n" : "";
  for (const auto& r : rows) {
    char secs[32];
    std::snprintf(secs, sizeof secs, "%.3f", r.seconds);
    out += r.participant + "," + r.group + "," + r.task + "," + r.measure + "," + secs + "\n";
  }
  return out;
}

}  // namespace perfhat::experiment
