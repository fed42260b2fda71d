// The domain of the sample service, after Agilefant (the study application of the
// PerformanceHat paper): products own backlogs, backlogs own iterations and stories, stories own
// tasks, and people log hour entries against tasks.
//
// Two values are loaded lazily, as an ORM would: a story's tasks and a task's spent effort. Both
// look like cheap accessors at the call site but cost a storage round trip on first access,
// which is exactly what makes the T4 maintenance task slow.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace agile {

class Repository;

enum class StoryState { kNotStarted, kStarted, kPending, kBlocked, kDone, kDeferred };
enum class TaskState { kNotStarted, kStarted, kBlocked, kDone };

const char* toString(StoryState state);
const char* toString(TaskState state);
StoryState storyStateFromInt(int value);
TaskState taskStateFromInt(int value);

struct Product {
  int id = 0;
  std::string name;
};

struct User {
  int id = 0;
  std::string login;
  std::string name;
  std::string team;
};

struct Backlog {
  int id = 0;
  int product_id = 0;
  int parent_id = 0;  // 0 for a product's root backlog
  std::string name;
  bool archived = false;

  bool isArchived() const { return archived; }
};

struct Iteration {
  int id = 0;
  int backlog_id = 0;
  std::string name;
  std::string start_date;  // ISO dates, compared as strings
  std::string end_date;

  bool isPastDeadline(const std::string& today) const { return end_date < today; }
};

struct HourEntry {
  int id = 0;
  int task_id = 0;
  int user_id = 0;
  double hours = 0;
  std::string date;
};

class Task {
 public:
  Task(const Repository* repository, int id, int story_id, int owner_id, std::string name,
       TaskState state, double original_estimate)
      : repository_(repository),
        id_(id),
        story_id_(story_id),
        owner_id_(owner_id),
        name_(std::move(name)),
        state_(state),
        original_estimate_(original_estimate) {}

  int id() const { return id_; }
  int storyId() const { return story_id_; }
  int ownerId() const { return owner_id_; }
  const std::string& name() const { return name_; }
  TaskState state() const { return state_; }
  double originalEstimate() const { return original_estimate_; }

  // Hours logged against this task. Lazily loaded: the first call queries the hour entries.
  double effortSpent() const;

 private:
  const Repository* repository_;
  int id_;
  int story_id_;
  int owner_id_;
  std::string name_;
  TaskState state_;
  double original_estimate_;
  mutable std::optional<double> effort_spent_;
};

class Story {
 public:
  Story(const Repository* repository, int id, int backlog_id, int iteration_id, std::string name,
        int story_points, StoryState state, int rank)
      : repository_(repository),
        id_(id),
        backlog_id_(backlog_id),
        iteration_id_(iteration_id),
        name_(std::move(name)),
        story_points_(story_points),
        state_(state),
        rank_(rank) {}

  int id() const { return id_; }
  int backlogId() const { return backlog_id_; }
  int iterationId() const { return iteration_id_; }
  const std::string& name() const { return name_; }
  int storyPoints() const { return story_points_; }
  StoryState state() const { return state_; }
  int rank() const { return rank_; }
  void setState(StoryState state) { state_ = state; }
  void setIteration(int iteration_id) { iteration_id_ = iteration_id; }

  // The story's tasks. Lazily loaded: the first call runs one query for this story.
  const std::vector<Task>& tasks() const;

 private:
  const Repository* repository_;
  int id_;
  int backlog_id_;
  int iteration_id_;
  std::string name_;
  int story_points_;
  StoryState state_;
  int rank_;
  mutable std::optional<std::vector<Task>> tasks_;
};

}  // namespace agile
