#include "samples/agile/repository.h"

#include "samples/agile/database.h"
#include "samples/agile/instrumentation.h"

namespace agile {
namespace {

constexpr const char* kStoryColumns =
    "SELECT id, backlog_id, iteration_id, name, story_points, state, rank FROM stories ";
constexpr const char* kTaskColumns =
    "SELECT id, story_id, owner_id, name, state, original_estimate FROM tasks ";

Backlog toBacklog(const Row& r) {
  return Backlog{int(r.integer(0)), int(r.integer(1)), int(r.integer(2)), r.text(3),
                 r.integer(4) != 0};
}

Iteration toIteration(const Row& r) {
  return Iteration{int(r.integer(0)), int(r.integer(1)), r.text(2), r.text(3), r.text(4)};
}

Story toStory(const Repository* repository, const Row& r) {
  return Story(repository, int(r.integer(0)), int(r.integer(1)), int(r.integer(2)), r.text(3),
               int(r.integer(4)), storyStateFromInt(int(r.integer(5))), int(r.integer(6)));
}

Task toTask(const Repository* repository, const Row& r) {
  return Task(repository, int(r.integer(0)), int(r.integer(1)), int(r.integer(2)), r.text(3),
              taskStateFromInt(int(r.integer(4))), r.real(5));
}

}  // namespace

std::vector<Product> Repository::products() const {
  PERFHAT_FUNCTION();
  std::vector<Product> result;
  for (const Row& r : db_.query("SELECT id, name FROM products ORDER BY id")) {
    result.push_back(Product{int(r.integer(0)), r.text(1)});
  }
  PERFHAT_RESULT_SIZE(result.size());
  return result;
}

std::optional<Backlog> Repository::backlog(int backlog_id) const {
  PERFHAT_FUNCTION();
  const auto rows = db_.query(
      "SELECT id, product_id, parent_id, name, archived FROM backlogs "
      "WHERE id = ?1",
      {int64_t{backlog_id}});
  if (rows.empty()) return std::nullopt;
  return toBacklog(rows.front());
}

std::vector<Backlog> Repository::childBacklogs(int parent_id) const {
  PERFHAT_FUNCTION();
  std::vector<Backlog> result;
  for (const Row& r : db_.query("SELECT id, product_id, parent_id, name, archived FROM backlogs "
                                "WHERE parent_id = ?1 ORDER BY id",
                                {int64_t{parent_id}})) {
    result.push_back(toBacklog(r));
  }
  PERFHAT_RESULT_SIZE(result.size());
  return result;
}

std::vector<Backlog> Repository::backlogsOfProduct(int product_id) const {
  PERFHAT_FUNCTION();
  std::vector<Backlog> result;
  for (const Row& r : db_.query("SELECT id, product_id, parent_id, name, archived FROM backlogs "
                                "WHERE product_id = ?1 ORDER BY id",
                                {int64_t{product_id}})) {
    result.push_back(toBacklog(r));
  }
  PERFHAT_RESULT_SIZE(result.size());
  return result;
}

std::optional<Iteration> Repository::iteration(int iteration_id) const {
  PERFHAT_FUNCTION();
  const auto rows =
      db_.query("SELECT id, backlog_id, name, start_date, end_date FROM iterations WHERE id = ?1",
                {int64_t{iteration_id}});
  if (rows.empty()) return std::nullopt;
  return toIteration(rows.front());
}

std::vector<Iteration> Repository::iterationsOf(int backlog_id) const {
  PERFHAT_FUNCTION();
  std::vector<Iteration> result;
  for (const Row& r : db_.query("SELECT id, backlog_id, name, start_date, end_date FROM "
                                "iterations WHERE backlog_id = ?1 ORDER BY start_date",
                                {int64_t{backlog_id}})) {
    result.push_back(toIteration(r));
  }
  PERFHAT_RESULT_SIZE(result.size());
  return result;
}

std::optional<Story> Repository::story(int story_id) const {
  PERFHAT_FUNCTION();
  const auto rows = db_.query(std::string(kStoryColumns) + "WHERE id = ?1", {int64_t{story_id}});
  if (rows.empty()) return std::nullopt;
  return toStory(this, rows.front());
}

std::vector<Story> Repository::storiesInBacklog(int backlog_id) const {
  PERFHAT_FUNCTION();
  std::vector<Story> result;
  for (const Row& r : db_.query(std::string(kStoryColumns) + "WHERE backlog_id = ?1 ORDER BY rank",
                                {int64_t{backlog_id}})) {
    result.push_back(toStory(this, r));
  }
  PERFHAT_RESULT_SIZE(result.size());
  return result;
}

std::vector<Story> Repository::storiesInIteration(int iteration_id) const {
  PERFHAT_FUNCTION();
  std::vector<Story> result;
  for (const Row& r :
       db_.query(std::string(kStoryColumns) + "WHERE iteration_id = ?1 ORDER BY rank",
                 {int64_t{iteration_id}})) {
    result.push_back(toStory(this, r));
  }
  PERFHAT_RESULT_SIZE(result.size());
  return result;
}

std::optional<Task> Repository::task(int task_id) const {
  PERFHAT_FUNCTION();
  const auto rows = db_.query(std::string(kTaskColumns) + "WHERE id = ?1", {int64_t{task_id}});
  if (rows.empty()) return std::nullopt;
  return toTask(this, rows.front());
}

std::vector<Task> Repository::tasksOfStory(int story_id) const {
  PERFHAT_FUNCTION();
  std::vector<Task> result;
  for (const Row& r : db_.query(std::string(kTaskColumns) + "WHERE story_id = ?1 ORDER BY id",
                                {int64_t{story_id}})) {
    result.push_back(toTask(this, r));
  }
  PERFHAT_RESULT_SIZE(result.size());
  return result;
}

double Repository::effortSpentOn(int task_id) const {
  PERFHAT_FUNCTION();
  const auto rows = db_.query("SELECT COALESCE(SUM(hours), 0) FROM hour_entries WHERE task_id = ?1",
                              {int64_t{task_id}});
  return rows.empty() ? 0.0 : rows.front().real(0);
}

std::vector<HourEntry> Repository::hourEntriesOfUser(int user_id) const {
  PERFHAT_FUNCTION();
  std::vector<HourEntry> result;
  for (const Row& r : db_.query("SELECT id, task_id, user_id, hours, date FROM hour_entries "
                                "WHERE user_id = ?1 ORDER BY date DESC LIMIT 50",
                                {int64_t{user_id}})) {
    result.push_back(
        HourEntry{int(r.integer(0)), int(r.integer(1)), int(r.integer(2)), r.real(3), r.text(4)});
  }
  PERFHAT_RESULT_SIZE(result.size());
  return result;
}

void Repository::updateStory(const Story& story) const {
  PERFHAT_FUNCTION();
  db_.execute("UPDATE stories SET iteration_id = ?2, state = ?3 WHERE id = ?1",
              {int64_t{story.id()}, int64_t{story.iterationId()},
               int64_t{static_cast<int>(story.state())}});
}

int Repository::logHours(int task_id, int user_id, double hours, const std::string& date) const {
  PERFHAT_FUNCTION();
  // RETURNING keeps the insert and the id in one round trip and race-free under concurrency.
  const auto rows = db_.query(
      "INSERT INTO hour_entries(task_id, user_id, hours, date) VALUES(?1, ?2, ?3, ?4) RETURNING id",
      {int64_t{task_id}, int64_t{user_id}, hours, date});
  return rows.empty() ? 0 : int(rows.front().integer(0));
}

}  // namespace agile
