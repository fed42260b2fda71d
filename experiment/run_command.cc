// `perfhat-experiment run`: one real participant's session. For every task in the study's order
// it shows the briefing, prepares a fresh copy of the sample, starts the total timer when the
// participant confirms they understood the task and reached the code, and records first
// encounter (FE) and root cause (RCA) — from the language server's events (lsp-proxy) where it
// can, from a key otherwise. Every event goes to DIR/events.jsonl first; running the same
// command again resumes where the session stopped (session.h explains the timing).
//
// Keys (a letter and Enter; a scripted participant writes the same lines to stdin):
//   Enter  understood the task and reached the code (starts the timer) / resume after a pause
//   f      first encounter of the performance problem   r  root cause found
//   d      task done   p  pause   q  quit (resume later with the same command)
#include <poll.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <optional>

#include "experiment/commands.h"
#include "experiment/design.h"
#include "experiment/session.h"

namespace perfhat::experiment {
namespace {

namespace fs = std::filesystem;

// One line from stdin; while waiting, `idle` runs every half second (to notice events other
// writers append). nullopt at end of input.
std::optional<std::string> readLine(const std::function<void()>& idle) {
  std::string line;
  for (;;) {
    pollfd p{STDIN_FILENO, POLLIN, 0};
    const int r = ::poll(&p, 1, 500);
    if (r == 0) {
      idle();
      continue;
    }
    char c;
    const ssize_t n = ::read(STDIN_FILENO, &c, 1);
    if (n <= 0) return line.empty() ? std::nullopt : std::optional<std::string>(line);
    if (c == '\n') break;
    if (line.size() < 256) line += c;
  }
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  return line;
}

std::string replaceAll(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
  return s;
}

class Runner {
 public:
  Runner(const Study& study, std::string study_path, std::string log, std::ostream& out)
      : study_(study), study_path_(std::move(study_path)), log_(std::move(log)), out_(out) {}

  void record(const std::string& type, const std::string& task, const std::string& source,
              nlohmann::json detail = nlohmann::json::object()) {
    appendEvent(log_, Event{nowMs(), type, task, source, std::move(detail)});
  }
  SessionState state() const { return replay(study_, loadEvents(log_)); }

  // compile_commands.json for every .cc of the copy, so perfhat-lsp parses the participant's
  // code (the editor's workspace is the task folder).
  void writeCompileCommands(const fs::path& task_dir, const fs::path& copy) const {
    if (study_.compile_flags.empty()) return;
    const std::string flags =
        replaceAll(replaceAll(study_.compile_flags, "{task_dir}", task_dir.string()), "{study_dir}",
                   fs::absolute(fs::path(study_path_).parent_path()).string());
    nlohmann::json db = nlohmann::json::array();
    for (const auto& entry : fs::recursive_directory_iterator(copy)) {
      if (entry.path().extension() != ".cc") continue;
      db.push_back({{"directory", task_dir.string()},
                    {"file", entry.path().string()},
                    {"command", "c++ " + flags + " -c " + entry.path().string()}});
    }
    std::ofstream(task_dir / "compile_commands.json") << db.dump(1) << "\n";
  }

  // false when the participant quit (or input ended): the session stays resumable.
  bool runTask(const StudyTask& task, const fs::path& dir) {
    SessionState s = state();
    TaskProgress t = s.tasks[task.id];
    if (!t.prepared) {
      std::string copy;
      if (!study_.sample.empty()) {
        const fs::path task_dir = fs::absolute(dir / task.id);
        fs::remove_all(task_dir);  // a copy interrupted half-way is not fresh
        const fs::path target = task_dir / study_.sample_path;
        fs::create_directories(target.parent_path());
        fs::copy(study_.sample, target, fs::copy_options::recursive);
        writeCompileCommands(task_dir, target);
        copy = target.string();
      }
      record("task_prepared", task.id, "runner", {{"dir", copy}});
      out_ << "[" << task.id << "] fresh copy of the sample: " << (copy.empty() ? "-" : copy)
           << "\n";
    }
    out_ << "\n======== " << task.id << " (" << task.type << ") ========\n"
         << readBoundedFile(task.briefing) << "\n";
    if (!t.started_ms) {
      out_ << "Press Enter when you have understood the task and reached the code.\n" << std::flush;
      for (;;) {
        auto line = readLine([] {});
        if (!line || *line == "q") return false;
        if (line->empty()) break;
      }
      record("task_started", task.id, "keyboard");
    }
    const bool perf = task.type == "performance";
    out_ << "Timer running. Keys: " << (perf ? "f = first encounter, r = root cause, " : "")
         << "d = done, p = pause, q = quit\n"
         << std::flush;
    bool fe_seen = t.fe_ms.has_value(), rca_seen = t.rca_ms.has_value();
    auto announce = [&] {  // events the language server produced meanwhile
      const TaskProgress now = state().tasks[task.id];
      if (now.fe_ms && !fe_seen) out_ << "first encounter recorded (" << now.fe_source << ")\n";
      if (now.rca_ms && !rca_seen) out_ << "root cause recorded (" << now.rca_source << ")\n";
      fe_seen = now.fe_ms.has_value();
      rca_seen = now.rca_ms.has_value();
      out_ << std::flush;
    };
    for (;;) {
      auto line = readLine(announce);
      if (!line || *line == "q") return false;
      if (*line == "f" && perf) {
        if (!state().tasks[task.id].fe_ms) record("first_encounter", task.id, "keyboard");
      } else if (*line == "r" && perf) {
        if (!state().tasks[task.id].fe_ms) {
          out_ << "no first encounter yet: press f first\n";
          continue;
        }
        if (!state().tasks[task.id].rca_ms) record("root_cause", task.id, "keyboard");
      } else if (*line == "p") {
        record("paused", "", "keyboard");
        out_ << "paused; press Enter to resume\n" << std::flush;
        auto again = readLine([] {});
        if (!again || *again == "q") return false;
        record("resumed", "", "keyboard");
      } else if (*line == "d") {
        record("task_finished", task.id, "keyboard");
        out_ << "[" << task.id << "] done\n" << std::flush;
        return true;
      } else {
        out_ << "unknown key '" << *line << "'\n";
        continue;
      }
      announce();
    }
  }

 private:
  const Study& study_;
  std::string study_path_;
  std::string log_;
  std::ostream& out_;
};

}  // namespace

int runRun(const RunOptions& o, std::ostream& out) {
  const Study study = loadStudy(o.study);
  const Design design = assignGroups(study, o.seed);
  std::string group;
  for (const auto& a : design.assignments) {
    if (a.participant == o.participant) group = a.group;
  }
  if (group.empty()) throw InputError(o.study + ": no participant " + o.participant);
  fs::create_directories(o.session_dir);
  const std::string log = (fs::path(o.session_dir) / "events.jsonl").string();
  Runner runner(study, o.study, log, out);

  const std::vector<Event> before = loadEvents(log);
  if (before.empty()) {
    runner.record("session_started", "", "runner",
                  {{"participant", o.participant}, {"group", group}, {"seed", o.seed}});
  } else {
    const SessionState s = replay(study, before);
    if (s.participant != o.participant || s.group != group) {
      throw InputError(log + ": this session belongs to " + s.participant + " (" + s.group +
                       "), not " + o.participant + " (" + group + ")");
    }
    if (!s.finished) {
      runner.record("resumed", "", "runner");
      out << "resuming the session of " << o.participant << "\n";
    }
  }
  out << "participant " << o.participant << ", group " << group
      << (group == "treatment" ? " (perfhat in the editor)" : " (the dashboard)") << "\n";

  if (!runner.state().finished) {
    for (const auto& task : study.tasks) {
      if (runner.state().tasks[task.id].finished_ms) continue;
      if (!runner.runTask(task, o.session_dir)) {
        out << "session interrupted; run the same command to resume\n";
        return 0;
      }
    }
    runner.record("session_finished", "", "runner");
  }
  const auto rows = sessionMeasurements(study, runner.state());
  const std::string csv = measurementsCsv(rows, true);
  const fs::path csv_path = fs::path(o.session_dir) / "measurements.csv";
  std::ofstream(csv_path) << csv;
  out << "session finished; measurements in " << csv_path.string() << ":\n" << csv;
  return 0;
}

}  // namespace perfhat::experiment
