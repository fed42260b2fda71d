// Tasks and hour entries: the task page, logging hours, and a person's timesheet.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "samples/agile/model.h"

namespace agile {

class Repository;
class UserDirectoryClient;

struct TaskDetails {
  int id = 0;
  int story_id = 0;
  std::string name;
  std::string state;
  std::string owner;
  double original_estimate = 0;
  double effort_spent = 0;
};

struct TimesheetLine {
  std::string date;
  std::string task;
  double hours = 0;
};

struct Timesheet {
  int user_id = 0;
  std::string user;
  double total_hours = 0;
  std::vector<TimesheetLine> lines;
};

class TaskService {
 public:
  TaskService(const Repository& repository, const UserDirectoryClient& directory)
      : repository_(repository), directory_(directory) {}

  std::optional<TaskDetails> taskDetails(int task_id) const;
  // Returns the new hour entry's id, or nullopt when the task does not exist.
  std::optional<int> logHours(int task_id, int user_id, double hours,
                              const std::string& date) const;
  Timesheet timesheet(int user_id) const;

 private:
  const Repository& repository_;
  const UserDirectoryClient& directory_;
};

}  // namespace agile
