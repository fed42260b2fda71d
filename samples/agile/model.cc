#include "samples/agile/model.h"

#include "samples/agile/instrumentation.h"
#include "samples/agile/repository.h"

namespace agile {

const char* toString(StoryState state) {
  switch (state) {
    case StoryState::kNotStarted:
      return "not_started";
    case StoryState::kStarted:
      return "started";
    case StoryState::kPending:
      return "pending";
    case StoryState::kBlocked:
      return "blocked";
    case StoryState::kDone:
      return "done";
    case StoryState::kDeferred:
      return "deferred";
  }
  return "unknown";
}

const char* toString(TaskState state) {
  switch (state) {
    case TaskState::kNotStarted:
      return "not_started";
    case TaskState::kStarted:
      return "started";
    case TaskState::kBlocked:
      return "blocked";
    case TaskState::kDone:
      return "done";
  }
  return "unknown";
}

StoryState storyStateFromInt(int value) {
  return value >= 0 && value <= 5 ? static_cast<StoryState>(value) : StoryState::kNotStarted;
}

TaskState taskStateFromInt(int value) {
  return value >= 0 && value <= 3 ? static_cast<TaskState>(value) : TaskState::kNotStarted;
}

double Task::effortSpent() const {
  PERFHAT_FUNCTION();
  if (!effort_spent_) effort_spent_ = repository_->effortSpentOn(id_);
  return *effort_spent_;
}

const std::vector<Task>& Story::tasks() const {
  PERFHAT_FUNCTION();
  if (!tasks_) tasks_ = repository_->tasksOfStory(id_);
  PERFHAT_RESULT_SIZE(tasks_->size());
  return *tasks_;
}

}  // namespace agile
