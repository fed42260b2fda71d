// Data access for the domain objects: one method per query, each one storage round trip.
// Services never write SQL; they compose these methods (and sometimes compose them badly, which
// is what the language server is there to show).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "samples/agile/model.h"

namespace agile {

class Database;

class Repository {
 public:
  explicit Repository(const Database& db) : db_(db) {}

  std::vector<Product> products() const;
  std::optional<Backlog> backlog(int backlog_id) const;
  std::vector<Backlog> childBacklogs(int parent_id) const;
  std::vector<Backlog> backlogsOfProduct(int product_id) const;
  std::optional<Iteration> iteration(int iteration_id) const;
  std::vector<Iteration> iterationsOf(int backlog_id) const;
  std::optional<Story> story(int story_id) const;
  std::vector<Story> storiesInBacklog(int backlog_id) const;
  std::vector<Story> storiesInIteration(int iteration_id) const;
  std::optional<Task> task(int task_id) const;
  std::vector<Task> tasksOfStory(int story_id) const;
  double effortSpentOn(int task_id) const;
  std::vector<HourEntry> hourEntriesOfUser(int user_id) const;

  void updateStory(const Story& story) const;
  int logHours(int task_id, int user_id, double hours, const std::string& date) const;

 private:
  const Database& db_;
};

}  // namespace agile
