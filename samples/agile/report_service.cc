#include "samples/agile/report_service.h"

#include <algorithm>
#include <cstdio>

#include "samples/agile/database.h"
#include "samples/agile/instrumentation.h"

namespace agile {
namespace {

using TaskRecord = ReportData::TaskRecord;
using StoryRecord = ReportData::StoryRecord;

// Hours logged against a task up to the end of each day of [first, last], plus one leading value
// for everything logged before `first`: timeline[i + 1] is the total at the end of day first + i.
std::vector<double> effortTimeline(const TaskRecord& task, int first, int last) {
  PERFHAT_FUNCTION();
  std::vector<double> timeline(size_t(last - first + 2), 0.0);
  double total = 0;
  auto entry = task.entries.begin();
  for (; entry != task.entries.end() && entry->first < first; ++entry) total += entry->second;
  timeline[0] = total;
  for (int day = first; day <= last; ++day) {
    for (; entry != task.entries.end() && entry->first == day; ++entry) total += entry->second;
    timeline[static_cast<size_t>(day - first) + 1] = total;
  }
  PERFHAT_LOOP_ITERATIONS(task.entries.size());
  return timeline;
}

std::vector<const TaskRecord*> tasksOfIteration(const ReportData& data, int iteration_id) {
  PERFHAT_FUNCTION();
  std::vector<const TaskRecord*> tasks;
  const auto stories = data.stories_of_iteration.find(iteration_id);
  if (stories == data.stories_of_iteration.end()) return tasks;
  for (size_t story : stories->second) {
    for (size_t task : data.stories[story].tasks) tasks.push_back(&data.tasks[task]);
  }
  PERFHAT_RESULT_SIZE(tasks.size());
  return tasks;
}

// Work left at the end of day index `i` (1-based into the timelines; 0 = before the first day).
double remainingAt(const std::vector<const TaskRecord*>& tasks,
                   const std::vector<std::vector<double>>& timelines, size_t i) {
  PERFHAT_FUNCTION();
  double remaining = 0;
  for (size_t t = 0; t < tasks.size(); ++t) {
    if (tasks[t]->state == TaskState::kDone) continue;
    remaining += std::max(0.0, tasks[t]->estimate - timelines[t][i]);
  }
  return remaining;
}

double loggedOn(const std::vector<std::vector<double>>& timelines, size_t i) {
  PERFHAT_FUNCTION();
  double logged = 0;
  for (const auto& timeline : timelines) logged += timeline[i] - timeline[i - 1];
  return logged;
}

void drawIdealLine(std::vector<BurndownDay>& days, double start) {
  PERFHAT_FUNCTION();
  const double step = days.size() > 1 ? start / double(days.size() - 1) : start;
  for (size_t i = 0; i < days.size(); ++i) days[i].ideal = std::max(0.0, start - step * double(i));
}

StoryProgress storyProgress(const StoryRecord& story, const std::vector<const TaskRecord*>& tasks,
                            const std::vector<std::vector<double>>& timelines) {
  PERFHAT_FUNCTION();
  StoryProgress progress{story.id, story.points};
  for (size_t t = 0; t < tasks.size(); ++t) {
    if (tasks[t]->story_id != story.id) continue;
    ++progress.tasks;
    if (tasks[t]->state == TaskState::kDone) ++progress.done_tasks;
    progress.estimate += tasks[t]->estimate;
    progress.spent += timelines[t].back();
  }
  return progress;
}

void addOwnerLoad(std::vector<OwnerLoad>& owners, const TaskRecord& task,
                  const std::vector<double>& timeline) {
  PERFHAT_FUNCTION();
  auto owner = std::lower_bound(owners.begin(), owners.end(), task.owner_id,
                                [](const OwnerLoad& o, int user) { return o.user < user; });
  if (owner == owners.end() || owner->user != task.owner_id) {
    owner = owners.insert(owner, OwnerLoad{task.owner_id});
  }
  if (task.state != TaskState::kDone) {
    ++owner->open_tasks;
    owner->remaining += std::max(0.0, task.estimate - timeline.back());
  }
  owner->logged += timeline.back() - timeline.front();
}

std::pair<int, int> iterationDays(const Iteration& iteration) {
  PERFHAT_FUNCTION();
  const int first = dayNumber(iteration.start_date).value_or(0);
  return {first, std::max(first, dayNumber(iteration.end_date).value_or(first))};
}

// Planned and done story points of an iteration.
std::pair<int, int> pointsOf(const ReportData& data, int iteration_id) {
  PERFHAT_FUNCTION();
  int planned = 0, done = 0;
  const auto stories = data.stories_of_iteration.find(iteration_id);
  if (stories == data.stories_of_iteration.end()) return {0, 0};
  for (size_t index : stories->second) {
    planned += data.stories[index].points;
    if (data.stories[index].state == StoryState::kDone) done += data.stories[index].points;
  }
  return {planned, done};
}

IterationVelocity iterationVelocity(const ReportData& data, const Iteration& iteration) {
  PERFHAT_FUNCTION();
  IterationVelocity velocity{iteration.id, iteration.name};
  std::tie(velocity.planned_points, velocity.done_points) = pointsOf(data, iteration.id);
  const auto [first, last] = iterationDays(iteration);
  const auto tasks = tasksOfIteration(data, iteration.id);
  std::vector<std::vector<double>> timelines;
  timelines.reserve(tasks.size());
  for (const TaskRecord* task : tasks) timelines.push_back(effortTimeline(*task, first, last));
  velocity.remaining = remainingAt(tasks, timelines, static_cast<size_t>(last - first) + 1);
  for (const auto& timeline : timelines) velocity.logged += timeline.back() - timeline.front();
  return velocity;
}

}  // namespace

std::optional<int> dayNumber(const std::string& date) {
  PERFHAT_FUNCTION();
  int year = 0, month = 0, day = 0;
  char tail = 0;
  if (date.size() != 10 ||
      std::sscanf(date.c_str(), "%4d-%2d-%2d%c", &year, &month, &day, &tail) != 3 || month < 1 ||
      month > 12 || day < 1 || day > 30) {
    return std::nullopt;
  }
  return (year - 2026) * 360 + (month - 1) * 30 + day - 1;
}

std::string dateOfDay(int day) {
  PERFHAT_FUNCTION();
  const int year = 2026 + (day >= 0 ? day / 360 : -((359 - day) / 360));
  const int in_year = day - (year - 2026) * 360;
  char buffer[32];  // room for any int, so the compiler can prove no truncation
  std::snprintf(buffer, sizeof buffer, "%04d-%02d-%02d", year, 1 + in_year / 30, 1 + in_year % 30);
  return buffer;
}

std::shared_ptr<const ReportData> loadReportData(const Database& db) {
  PERFHAT_FUNCTION();
  auto data = std::make_shared<ReportData>();
  for (const Row& r : db.query("SELECT id, backlog_id, name, start_date, end_date FROM iterations "
                               "ORDER BY start_date, id")) {
    Iteration iteration{int(r.integer(0)), int(r.integer(1)), r.text(2), r.text(3), r.text(4)};
    data->iterations_of_backlog[iteration.backlog_id].push_back(iteration.id);
    data->iterations.emplace(iteration.id, std::move(iteration));
  }
  std::map<int, size_t> story_index;
  for (const Row& r : db.query("SELECT id, backlog_id, iteration_id, story_points, state FROM "
                               "stories ORDER BY rank, id")) {
    StoryRecord story{int(r.integer(0)), int(r.integer(1)), int(r.integer(2)), int(r.integer(3)),
                      storyStateFromInt(int(r.integer(4)))};
    story_index[story.id] = data->stories.size();
    if (story.iteration_id != 0) {
      data->stories_of_iteration[story.iteration_id].push_back(data->stories.size());
    }
    data->stories.push_back(std::move(story));
  }
  std::map<int, size_t> task_index;
  for (const Row& r : db.query("SELECT id, story_id, owner_id, state, original_estimate FROM "
                               "tasks ORDER BY id")) {
    TaskRecord task{int(r.integer(0)), int(r.integer(1)), int(r.integer(2)),
                    taskStateFromInt(int(r.integer(3))), r.real(4)};
    const auto story = story_index.find(task.story_id);
    if (story == story_index.end()) continue;  // orphan rows do not belong in any report
    data->stories[story->second].tasks.push_back(data->tasks.size());
    task_index[task.id] = data->tasks.size();
    data->tasks.push_back(std::move(task));
  }
  for (const Row& r : db.query("SELECT task_id, hours, date FROM hour_entries ORDER BY date, id")) {
    const auto task = task_index.find(int(r.integer(0)));
    const auto day = dayNumber(r.text(2));
    if (task == task_index.end() || !day) continue;
    data->tasks[task->second].entries.emplace_back(*day, r.real(1));
  }
  PERFHAT_RESULT_SIZE(data->tasks.size());
  return data;
}

std::shared_ptr<const ReportData> ReportService::data() const {
  PERFHAT_FUNCTION();
  std::lock_guard lock(mutex_);
  const auto now = std::chrono::steady_clock::now();
  // Loaded under the lock: concurrent reports wait for one load instead of each running it.
  if (!data_ || now - loaded_at_ >= max_age_) {
    data_ = loadReportData(db_);
    loaded_at_ = now;
  }
  return data_;
}

std::optional<Burndown> ReportService::burndown(int iteration_id) const {
  PERFHAT_FUNCTION();
  const auto data = this->data();
  const auto found = data->iterations.find(iteration_id);
  if (found == data->iterations.end()) return std::nullopt;
  Burndown report{found->second};
  std::tie(report.planned_points, report.done_points) = pointsOf(*data, iteration_id);
  const auto [first, last] = iterationDays(report.iteration);
  const auto tasks = tasksOfIteration(*data, iteration_id);
  std::vector<std::vector<double>> timelines;
  timelines.reserve(tasks.size());
  for (const TaskRecord* task : tasks) timelines.push_back(effortTimeline(*task, first, last));

  for (int day = first; day <= last; ++day) {
    const size_t i = static_cast<size_t>(day - first) + 1;
    report.days.push_back(
        BurndownDay{dateOfDay(day), remainingAt(tasks, timelines, i), 0, loggedOn(timelines, i)});
  }
  drawIdealLine(report.days, report.days.empty() ? 0 : report.days.front().remaining);
  if (const auto stories = data->stories_of_iteration.find(iteration_id);
      stories != data->stories_of_iteration.end()) {
    for (size_t index : stories->second) {
      report.stories.push_back(storyProgress(data->stories[index], tasks, timelines));
    }
  }
  for (size_t t = 0; t < tasks.size(); ++t) addOwnerLoad(report.owners, *tasks[t], timelines[t]);
  return report;
}

std::optional<Velocity> ReportService::velocity(int backlog_id) const {
  PERFHAT_FUNCTION();
  const auto data = this->data();
  const auto iterations = data->iterations_of_backlog.find(backlog_id);
  if (iterations == data->iterations_of_backlog.end()) return std::nullopt;
  Velocity report{backlog_id};
  for (int id : iterations->second) {
    report.iterations.push_back(iterationVelocity(*data, data->iterations.at(id)));
    report.mean_done_points += report.iterations.back().done_points;
  }
  report.mean_done_points /= double(report.iterations.size());
  PERFHAT_RESULT_SIZE(report.iterations.size());
  return report;
}

}  // namespace agile
