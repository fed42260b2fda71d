// Stories: the story page (tasks with their owners) and moving a story between iterations.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "samples/agile/model.h"

namespace agile {

class Repository;
class UserDirectoryClient;

struct TaskRow {
  int id = 0;
  std::string name;
  std::string state;
  std::string owner;
  double original_estimate = 0;
};

struct StoryDetails {
  int id = 0;
  std::string name;
  int story_points = 0;
  std::string state;
  int iteration_id = 0;
  std::vector<TaskRow> tasks;
};

enum class MoveResult { kMoved, kNoSuchStory, kNoSuchIteration };

class StoryService {
 public:
  StoryService(const Repository& repository, const UserDirectoryClient& directory)
      : repository_(repository), directory_(directory) {}

  std::optional<StoryDetails> storyDetails(int story_id) const;
  MoveResult moveStory(int story_id, int iteration_id, const std::string& today) const;
  // Hours logged on the story: the sum of its tasks' spent effort.
  std::optional<double> storyEffort(int story_id) const;

 private:
  const Repository& repository_;
  const UserDirectoryClient& directory_;
};

}  // namespace agile
