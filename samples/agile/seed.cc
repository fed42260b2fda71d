#include "samples/agile/seed.h"

#include <sqlite3.h>

#include <random>
#include <string>

#include "samples/agile/database.h"

namespace agile {
namespace {

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS users(id INTEGER PRIMARY KEY, login TEXT, name TEXT, team TEXT);
CREATE TABLE IF NOT EXISTS products(id INTEGER PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS backlogs(id INTEGER PRIMARY KEY, product_id INTEGER NOT NULL,
  parent_id INTEGER NOT NULL, name TEXT NOT NULL, archived INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS iterations(id INTEGER PRIMARY KEY, backlog_id INTEGER NOT NULL,
  name TEXT NOT NULL, start_date TEXT NOT NULL, end_date TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS stories(id INTEGER PRIMARY KEY, backlog_id INTEGER NOT NULL,
  iteration_id INTEGER NOT NULL, name TEXT NOT NULL, story_points INTEGER NOT NULL,
  state INTEGER NOT NULL, rank INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS tasks(id INTEGER PRIMARY KEY, story_id INTEGER NOT NULL,
  owner_id INTEGER NOT NULL, name TEXT NOT NULL, state INTEGER NOT NULL,
  original_estimate REAL NOT NULL);
CREATE TABLE IF NOT EXISTS hour_entries(id INTEGER PRIMARY KEY, task_id INTEGER NOT NULL,
  user_id INTEGER NOT NULL, hours REAL NOT NULL, date TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS backlogs_parent ON backlogs(parent_id);
CREATE INDEX IF NOT EXISTS iterations_backlog ON iterations(backlog_id);
CREATE INDEX IF NOT EXISTS stories_backlog ON stories(backlog_id);
CREATE INDEX IF NOT EXISTS stories_iteration ON stories(iteration_id);
CREATE INDEX IF NOT EXISTS tasks_story ON tasks(story_id);
CREATE INDEX IF NOT EXISTS hour_entries_task ON hour_entries(task_id);
CREATE INDEX IF NOT EXISTS hour_entries_user ON hour_entries(user_id);
)sql";

const char* const kProductNames[] = {"Agilefant", "Timesheets", "Portfolio",
                                     "Insights",  "Roadmaps",   "Mobile"};
const char* const kVerbs[] = {"Show", "Edit",  "Export",  "Import", "Filter",
                              "Sort", "Share", "Archive", "Plan",   "Estimate"};
const char* const kObjects[] = {"backlog",  "iteration", "story",     "task", "hour entry",
                                "burndown", "timesheet", "portfolio", "team", "report"};
const char* const kTeams[] = {"Core", "Web", "Mobile", "Platform"};

// Deterministic across standard libraries: only the raw mt19937 output is used.
class Dice {
 public:
  explicit Dice(uint32_t seed) : engine_(seed) {}
  int between(int low, int high) { return low + static_cast<int>(engine_() % (high - low + 1)); }

 private:
  std::mt19937 engine_;
};

std::string isoDate(int day_of_year) {
  // 2026, months of 30 days are good enough for sorting and display.
  const int month = 1 + (day_of_year / 30) % 12;
  const int day = 1 + day_of_year % 30;
  char buffer[16];
  std::snprintf(buffer, sizeof buffer, "2026-%02d-%02d", month, day);
  return buffer;
}

}  // namespace

void createSchema(Database& db) {
  db.transaction([](sqlite3* connection) {
    char* error = nullptr;
    if (sqlite3_exec(connection, kSchema, nullptr, nullptr, &error) != SQLITE_OK) {
      std::string message = error ? error : "unknown error";
      sqlite3_free(error);
      throw DatabaseError("schema: " + message);
    }
  });
}

SeedSummary seedDataset(Database& db, const SeedConfig& config) {
  SeedSummary summary;
  db.transaction([&](sqlite3* c) {
    sqlite3_stmt* probe = nullptr;
    sqlite3_prepare_v2(c, "SELECT COUNT(*) FROM products", -1, &probe, nullptr);
    const bool empty = sqlite3_step(probe) == SQLITE_ROW && sqlite3_column_int(probe, 0) == 0;
    sqlite3_finalize(probe);
    if (!empty) return;

    Dice dice(config.seed);
    for (int u = 1; u <= config.users; ++u) {
      executeRaw(c, "INSERT INTO users VALUES(?1,?2,?3,?4)",
                 {int64_t{u}, "user" + std::to_string(u), "User " + std::to_string(u),
                  std::string(kTeams[u % 4])});
    }
    int backlog_id = 0, iteration_id = 0, story_id = 0, task_id = 0, entry_id = 0;
    for (int p = 1; p <= config.products; ++p) {
      const std::string product = kProductNames[(p - 1) % 6];
      executeRaw(c, "INSERT INTO products VALUES(?1,?2)", {int64_t{p}, product});
      const int root = ++backlog_id;
      executeRaw(c, "INSERT INTO backlogs VALUES(?1,?2,0,?3,0)",
                 {int64_t{root}, int64_t{p}, product + " product backlog"});
      ++summary.backlogs;
      for (int j = 1; j <= config.projects_per_product; ++j) {
        const int project = ++backlog_id;
        executeRaw(c, "INSERT INTO backlogs VALUES(?1,?2,?3,?4,?5)",
                   {int64_t{project}, int64_t{p}, int64_t{root},
                    product + " release " + std::to_string(j), int64_t{j == 1 ? 1 : 0}});
        ++summary.backlogs;
        std::vector<int> iterations;
        for (int i = 1; i <= config.iterations_per_project; ++i) {
          iterations.push_back(++iteration_id);
          const int start = (j - 1) * 60 + (i - 1) * 14;
          executeRaw(c, "INSERT INTO iterations VALUES(?1,?2,?3,?4,?5)",
                     {int64_t{iteration_id}, int64_t{project}, "Sprint " + std::to_string(i),
                      isoDate(start), isoDate(start + 13)});
          ++summary.iterations;
        }
        for (int s = 1; s <= config.stories_per_project; ++s) {
          ++story_id;
          // A fifth of the stories wait in the backlog, the rest are planned into iterations.
          const int in_iteration =
              dice.between(0, 4) == 0 ? 0 : iterations[dice.between(0, int(iterations.size()) - 1)];
          const int story_backlog = dice.between(0, 3) == 0 ? root : project;
          executeRaw(c, "INSERT INTO stories VALUES(?1,?2,?3,?4,?5,?6,?7)",
                     {int64_t{story_id}, int64_t{story_backlog}, int64_t{in_iteration},
                      std::string(kVerbs[dice.between(0, 9)]) + " " + kObjects[dice.between(0, 9)] +
                          " #" + std::to_string(story_id),
                      int64_t{dice.between(1, 13)}, int64_t{dice.between(0, 4)}, int64_t{s}});
          ++summary.stories;
          const int tasks = dice.between(2, config.max_tasks_per_story);
          for (int t = 0; t < tasks; ++t) {
            ++task_id;
            executeRaw(c, "INSERT INTO tasks VALUES(?1,?2,?3,?4,?5,?6)",
                       {int64_t{task_id}, int64_t{story_id}, int64_t{dice.between(1, config.users)},
                        "Task " + std::to_string(t + 1) + " of story " + std::to_string(story_id),
                        int64_t{dice.between(0, 3)}, double(dice.between(1, 16))});
            ++summary.tasks;
            const int entries = dice.between(0, config.max_hour_entries_per_task);
            for (int e = 0; e < entries; ++e) {
              executeRaw(
                  c, "INSERT INTO hour_entries VALUES(?1,?2,?3,?4,?5)",
                  {int64_t{++entry_id}, int64_t{task_id}, int64_t{dice.between(1, config.users)},
                   dice.between(1, 16) * 0.5, isoDate(dice.between(0, 200))});
              ++summary.hour_entries;
            }
          }
        }
      }
      ++summary.products;
    }
  });
  return summary;
}

}  // namespace agile
