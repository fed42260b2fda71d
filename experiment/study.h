// The study definition (docs/experiment.md; example in samples/study/): the tasks participants
// solve and the participants with their experience and self-rated performance skill.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace perfhat::experiment {

struct StudyTask {
  std::string id;        // "T1"
  std::string type;      // "performance" (FE and RCA are measured) or "regular"
  std::string briefing;  // path of the briefing (Markdown), resolved against the study file
  std::string function;  // the function the task changes (perfhat's key spelling), optional
  std::string culprit;   // the root cause a participant must find (performance tasks), optional
  std::vector<std::string> measures() const;  // total (+ fe, rca for performance tasks)
};

struct Participant {
  std::string id;
  double experience_years = 0;
  int performance_skill = 0;  // self-rated on the study's Likert scale
};

struct Study {
  std::string name;
  int skill_min = 1, skill_max = 5;  // the Likert scale of performance_skill
  std::string sample;                // folder copied fresh for every task (resolved; empty = none)
  std::string sample_path;  // where the copy goes inside the task's folder (default: its name)
  // Compiler flags for the copy's compile_commands.json ({task_dir}, {study_dir} replaced), so
  // perfhat-lsp can parse it; empty = no compile database.
  std::string compile_flags;
  std::vector<StudyTask> tasks;
  std::vector<Participant> participants;
  nlohmann::json source;  // the file as read, embedded in reports
};

// Parses and validates (unique ids, known types, skill on the scale, briefing files exist).
// Throws InputError naming the file and the offending entry.
Study parseStudy(const std::string& text, const std::string& path);
Study loadStudy(const std::string& path);

}  // namespace perfhat::experiment
