// Schema and the deterministic demo dataset: a few products, each with a root backlog, project
// backlogs below it, iterations, hundreds of stories, thousands of tasks and hour entries.
// Same seed ⇒ same rows, so every demo run and benchmark measures the same workload.
#pragma once

#include <cstdint>

namespace agile {

class Database;

struct SeedConfig {
  uint32_t seed = 20261122;
  int users = 40;
  int products = 3;
  int projects_per_product = 3;  // child backlogs of each product backlog
  int iterations_per_project = 4;
  int stories_per_project = 40;  // spread over the project's iterations and its own backlog
  int max_tasks_per_story = 10;  // 2..max, so ~6 on average
  int max_hour_entries_per_task = 6;
};

struct SeedSummary {
  int products = 0, backlogs = 0, iterations = 0, stories = 0, tasks = 0, hour_entries = 0;
};

void createSchema(Database& db);
// Fills an empty database; a database that already holds products is left untouched.
SeedSummary seedDataset(Database& db, const SeedConfig& config = {});

}  // namespace agile
