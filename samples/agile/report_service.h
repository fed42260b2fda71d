// Reports: iteration burndowns and backlog velocity, computed in memory.
//
// This is the sample's CPU-bound path. Reports read every task and hour entry of an iteration,
// so they do not go through the Repository's one-query-per-object methods; like the reporting
// side of a real service they read a read model: a snapshot of the tables loaded in a few bulk
// queries and refreshed when older than `max_age` (reports may lag writes by that much). The
// work per request is then pure computation over the snapshot, split into the small domain
// functions a real code base has (a timeline per task, the remaining work per day, progress per
// story, load per owner), each probed like every other function of the service.
//
// Dates: the sample's calendar has 30-day months (see seed.cc), so "YYYY-MM-DD" maps to a day
// number (month - 1) * 30 + day - 1 and back.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "samples/agile/model.h"

namespace agile {

class Database;

// Day number of a "YYYY-MM-DD" date in the sample's calendar; nullopt when malformed.
std::optional<int> dayNumber(const std::string& date);
std::string dateOfDay(int day);

// The tables reports read, indexed for the reports' access paths.
struct ReportData {
  struct TaskRecord {
    int id = 0;
    int story_id = 0;
    int owner_id = 0;
    TaskState state = TaskState::kNotStarted;
    double estimate = 0;
    // (day, hours) of every hour entry logged against the task, sorted by day.
    std::vector<std::pair<int, double>> entries;
  };
  struct StoryRecord {
    int id = 0;
    int backlog_id = 0;
    int iteration_id = 0;
    int points = 0;
    StoryState state = StoryState::kNotStarted;
    std::vector<size_t> tasks;  // indexes into `tasks`
  };
  std::map<int, Iteration> iterations;
  std::map<int, std::vector<int>> iterations_of_backlog;  // ordered by start date
  std::vector<StoryRecord> stories;
  std::map<int, std::vector<size_t>> stories_of_iteration;  // indexes into `stories`
  std::vector<TaskRecord> tasks;
};

// Loads the snapshot in four bulk queries.
std::shared_ptr<const ReportData> loadReportData(const Database& db);

struct BurndownDay {
  std::string date;
  // Hours of work left: Σ over the tasks not done of max(0, estimate − hours logged up to the day).
  double remaining = 0;
  double ideal = 0;   // straight line from the first day's remaining work to zero
  double logged = 0;  // hours logged on that day against the iteration's tasks
};

struct StoryProgress {
  int id = 0;
  int points = 0;
  int tasks = 0;
  int done_tasks = 0;
  double estimate = 0;
  double spent = 0;  // up to the iteration's last day
};

struct OwnerLoad {
  int user = 0;
  int open_tasks = 0;
  double remaining = 0;  // at the iteration's last day
  double logged = 0;     // within the iteration
};

struct Burndown {
  Iteration iteration;
  std::vector<BurndownDay> days;
  std::vector<StoryProgress> stories;
  std::vector<OwnerLoad> owners;  // by user id
  int planned_points = 0;
  int done_points = 0;
};

struct IterationVelocity {
  int iteration = 0;
  std::string name;
  int planned_points = 0;
  int done_points = 0;
  double logged = 0;     // hours logged within the iteration's days
  double remaining = 0;  // at its last day
};

struct Velocity {
  int backlog = 0;
  std::vector<IterationVelocity> iterations;  // by start date
  double mean_done_points = 0;
};

class ReportService {
 public:
  ReportService(const Database& db, std::chrono::milliseconds max_age = std::chrono::seconds(5))
      : db_(db), max_age_(max_age) {}

  std::optional<Burndown> burndown(int iteration_id) const;
  // nullopt when the backlog has no iterations (or does not exist).
  std::optional<Velocity> velocity(int backlog_id) const;

 private:
  // The current snapshot, reloaded first when older than max_age_.
  std::shared_ptr<const ReportData> data() const;

  const Database& db_;
  std::chrono::milliseconds max_age_;
  mutable std::mutex mutex_;
  mutable std::shared_ptr<const ReportData> data_;
  mutable std::chrono::steady_clock::time_point loaded_at_;
};

}  // namespace agile
