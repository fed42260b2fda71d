#include "samples/agile/seed.h"

#include <gtest/gtest.h>

#include "samples/agile/database.h"
#include "samples/agile/repository.h"
#include "samples/agile/test_support.h"

namespace agile {
namespace {

using testing::TempDir;

TEST(SamplesSeed, DatasetIsDeterministicAndSized) {
  TempDir a, b;
  Database db_a({a.path() + "/x.sqlite", std::chrono::microseconds(0), 1});
  Database db_b({b.path() + "/x.sqlite", std::chrono::microseconds(0), 1});
  createSchema(db_a);
  createSchema(db_b);
  const SeedSummary sa = seedDataset(db_a);
  const SeedSummary sb = seedDataset(db_b);
  EXPECT_EQ(sa.products, 3);
  EXPECT_EQ(sa.backlogs, 12);
  EXPECT_EQ(sa.iterations, 36);
  EXPECT_EQ(sa.stories, 360);
  EXPECT_GT(sa.tasks, 1000);
  EXPECT_EQ(sa.tasks, sb.tasks);
  EXPECT_EQ(sa.hour_entries, sb.hour_entries);
  const auto rows_a = db_a.query("SELECT group_concat(name || story_points, ',') FROM stories");
  const auto rows_b = db_b.query("SELECT group_concat(name || story_points, ',') FROM stories");
  EXPECT_EQ(rows_a.at(0).text(0), rows_b.at(0).text(0));
}

TEST(SamplesSeed, SeedingTwiceKeepsTheFirstDataset) {
  TempDir dir;
  Database db({dir.path() + "/x.sqlite", std::chrono::microseconds(0), 1});
  createSchema(db);
  EXPECT_EQ(seedDataset(db).stories, 360);
  EXPECT_EQ(seedDataset(db).stories, 0);
  EXPECT_EQ(db.query("SELECT COUNT(*) FROM stories").at(0).integer(0), 360);
}

TEST(SamplesRepository, StoryTasksAreLoadedLazilyOnce) {
  TempDir dir;
  Database db({dir.path() + "/x.sqlite", std::chrono::microseconds(0), 2});
  createSchema(db);
  seedDataset(db);
  Repository repository(db);
  auto story = repository.story(5);
  ASSERT_TRUE(story.has_value());
  const uint64_t before = db.statementCount();
  const auto& tasks = story->tasks();
  EXPECT_EQ(db.statementCount(), before + 1) << "first access runs one query";
  EXPECT_GE(tasks.size(), 2u);
  story->tasks();
  EXPECT_EQ(db.statementCount(), before + 1) << "second access is served from memory";
  for (const Task& task : tasks) EXPECT_EQ(task.storyId(), 5);
}

TEST(SamplesRepository, EffortSpentIsLazyAndMatchesTheHourEntries) {
  TempDir dir;
  Database db({dir.path() + "/x.sqlite", std::chrono::microseconds(0), 2});
  createSchema(db);
  seedDataset(db);
  Repository repository(db);
  auto task = repository.task(17);
  ASSERT_TRUE(task.has_value());
  const double expected =
      db.query("SELECT COALESCE(SUM(hours),0) FROM hour_entries WHERE task_id = 17").at(0).real(0);
  const uint64_t before = db.statementCount();
  EXPECT_DOUBLE_EQ(task->effortSpent(), expected);
  EXPECT_DOUBLE_EQ(task->effortSpent(), expected);
  EXPECT_EQ(db.statementCount(), before + 1);
  const int entry = repository.logHours(17, 3, 2.5, "2026-06-15");
  EXPECT_GT(entry, 0);
  EXPECT_DOUBLE_EQ(repository.task(17)->effortSpent(), expected + 2.5);
}

TEST(SamplesDatabase, BadSqlIsAClearError) {
  TempDir dir;
  Database db({dir.path() + "/x.sqlite", std::chrono::microseconds(0), 1});
  EXPECT_THROW(db.query("SELECT * FROM no_such_table"), DatabaseError);
  // The connection went back to the pool: the next statement still runs.
  EXPECT_EQ(db.query("SELECT 1").at(0).integer(0), 1);
}

TEST(SamplesDatabase, UnopenablePathIsAClearError) {
  EXPECT_THROW(Database({"/nonexistent-dir/x/y.sqlite", std::chrono::microseconds(0), 1}),
               DatabaseError);
}

}  // namespace
}  // namespace agile
