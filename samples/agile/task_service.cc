#include "samples/agile/task_service.h"

#include "samples/agile/instrumentation.h"
#include "samples/agile/repository.h"
#include "samples/agile/user_directory.h"

namespace agile {

std::optional<TaskDetails> TaskService::taskDetails(int task_id) const {
  PERFHAT_FUNCTION();
  auto task = repository_.task(task_id);
  if (!task) return std::nullopt;
  return TaskDetails{task->id(),
                     task->storyId(),
                     task->name(),
                     toString(task->state()),
                     directory_.displayName(task->ownerId()),
                     task->originalEstimate(),
                     task->effortSpent()};
}

std::optional<int> TaskService::logHours(int task_id, int user_id, double hours,
                                         const std::string& date) const {
  PERFHAT_FUNCTION();
  if (!repository_.task(task_id)) return std::nullopt;
  return repository_.logHours(task_id, user_id, hours, date);
}

Timesheet TaskService::timesheet(int user_id) const {
  PERFHAT_FUNCTION();
  Timesheet sheet{user_id, directory_.displayName(user_id)};
  // N+1: each entry's task is fetched on its own to show the task's name.
  for (const HourEntry& entry : repository_.hourEntriesOfUser(user_id)) {
    const auto task = repository_.task(entry.task_id);
    sheet.lines.push_back(TimesheetLine{entry.date, task ? task->name() : "?", entry.hours});
    sheet.total_hours += entry.hours;
  }
  return sheet;
}

}  // namespace agile
