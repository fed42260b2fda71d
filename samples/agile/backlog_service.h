// Backlogs: what a product owner sees when opening a backlog, and the whole tree below it.
#pragma once

#include <optional>
#include <vector>

#include "samples/agile/model.h"

namespace agile {

class Repository;
class UserDirectoryClient;

struct StoryRow {
  int id = 0;
  std::string name;
  int story_points = 0;
  std::string state;
  int task_count = 0;
  double open_points = 0;
};

struct BacklogView {
  Backlog backlog;
  std::vector<StoryRow> stories;
  std::vector<Iteration> iterations;
};

struct BacklogTree {
  Backlog root;
  int backlog_count = 0;
  int story_count = 0;
  int total_points = 0;
  std::vector<std::string> owners;  // everyone with a task anywhere in the tree
};

class BacklogService {
 public:
  BacklogService(const Repository& repository, const UserDirectoryClient& directory)
      : repository_(repository), directory_(directory) {}

  std::optional<BacklogView> backlogContents(int backlog_id) const;
  std::optional<BacklogTree> backlogTree(int backlog_id) const;

  // The stories of a backlog and of every backlog below it, ready for planning: each story's
  // tasks are loaded and its owners resolved, and stories of archived backlogs are left out.
  std::vector<Story> descendantStories(int backlog_id) const;

  // Points of the story that are still open: its points scaled by the share of unfinished tasks.
  double storyPoints(const Story& story) const;

 private:
  void collectStories(const Backlog& backlog, std::vector<Story>& out) const;

  const Repository& repository_;
  const UserDirectoryClient& directory_;
};

}  // namespace agile
