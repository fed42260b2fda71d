// One participant's session, replayed from its event log: where the session stands (for resuming)
// and the measures it yields (total, FE, RCA per task) as measurement rows.
//
// Timing policy: the total timer of a task starts at `task_started` (the participant confirmed
// they understood the task and reached the code) and stops at `task_finished`. FE is the first
// `first_encounter` after the start, RCA runs from FE to the first `root_cause`. Time while the
// session was paused is not counted: a `resumed` event excludes the interval since the event
// before it (an explicit `paused`, or the last event recorded before a crash or quit).
//
// Language-server events (`lsp_diagnostic`, `lsp_hover`, written by `lsp-proxy`) carry no task:
// they count for the task running at the time — a regression diagnostic naming the task's
// function is its first encounter, a hover naming its culprit after FE is its root cause.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "experiment/event_log.h"
#include "experiment/measurements.h"
#include "experiment/study.h"

namespace perfhat::experiment {

struct TaskProgress {
  bool prepared = false;
  std::optional<int64_t> started_ms, fe_ms, rca_ms, finished_ms;
  std::string fe_source, rca_source;  // "keyboard" or "lsp"
};

struct SessionState {
  std::string participant, group;
  std::map<std::string, TaskProgress> tasks;
  std::vector<std::pair<int64_t, int64_t>> pauses;  // excluded intervals [from, to]
  bool paused = false;
  bool finished = false;
  std::string running;  // the task started and not finished, if any
};

SessionState replay(const Study& study, const std::vector<Event>& events);

// Seconds between two instants minus the paused time between them.
double activeSeconds(const SessionState& s, int64_t from_ms, int64_t to_ms);

// The function's name without scope and parameters: "a::B::f(int) const" -> "f".
std::string shortName(const std::string& key);

// Rows for the measurements CSV (participant,group,task,measure,seconds) of every finished task.
std::vector<Observation> sessionMeasurements(const Study& study, const SessionState& s);
std::string measurementsCsv(const std::vector<Observation>& rows, bool header);

}  // namespace perfhat::experiment
