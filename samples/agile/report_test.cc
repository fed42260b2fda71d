// The reports (the sample's CPU-bound path) against answers computed independently in SQL over
// the seeded dataset, and over HTTP.
#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>

#include "samples/agile/report_api.h"
#include "samples/agile/report_service.h"
#include "samples/agile/test_support.h"

namespace agile {
namespace {

using nlohmann::json;

class SamplesReports : public ::testing::Test {
 protected:
  SamplesReports() : db_({dir_.path() + "/agile.sqlite", std::chrono::microseconds(0), 2}) {
    createSchema(db_);
    seedDataset(db_);
  }

  double sql(const std::string& query, const std::vector<SqlValue>& params) {
    return db_.query(query, params).at(0).real(0);
  }

  // Remaining work at the end of `date`, straight from the tables (TaskState::kDone == 3).
  double remainingInSql(int iteration, const std::string& date) {
    return sql(
        "SELECT COALESCE(SUM(MAX(0.0, t.original_estimate - COALESCE((SELECT SUM(h.hours) FROM "
        "hour_entries h WHERE h.task_id = t.id AND h.date <= ?2), 0))), 0) FROM tasks t JOIN "
        "stories s ON s.id = t.story_id WHERE s.iteration_id = ?1 AND t.state != 3",
        {int64_t{iteration}, date});
  }
  double loggedInSql(int iteration, const std::string& from, const std::string& to) {
    return sql(
        "SELECT COALESCE(SUM(h.hours), 0) FROM hour_entries h JOIN tasks t ON t.id = h.task_id "
        "JOIN stories s ON s.id = t.story_id WHERE s.iteration_id = ?1 AND h.date >= ?2 AND "
        "h.date <= ?3",
        {int64_t{iteration}, from, to});
  }

  testing::TempDir dir_;
  Database db_;
};

TEST_F(SamplesReports, DatesFollowTheSampleCalendar) {
  EXPECT_EQ(dayNumber("2026-01-01"), 0);
  EXPECT_EQ(dayNumber("2026-02-01"), 30);
  EXPECT_EQ(dayNumber("2027-01-02"), 361);
  for (int day : {0, 29, 30, 200, 359, 360, 725}) EXPECT_EQ(dayNumber(dateOfDay(day)), day);
  for (const char* bad : {"", "2026-13-01", "2026-02-31", "2026-1-1", "2026-01-01x", "tomorrow"}) {
    EXPECT_FALSE(dayNumber(bad).has_value()) << bad;
  }
}

TEST_F(SamplesReports, BurndownMatchesTheTables) {
  const ReportService reports(db_);
  for (int iteration : {1, 6, 17}) {
    const auto report = reports.burndown(iteration);
    ASSERT_TRUE(report) << iteration;
    ASSERT_EQ(report->days.size(), 14u);  // the seeded sprints last two weeks
    EXPECT_EQ(report->days.front().date, report->iteration.start_date);
    EXPECT_EQ(report->days.back().date, report->iteration.end_date);
    double logged = 0;
    for (const BurndownDay& day : report->days) {
      EXPECT_NEAR(day.remaining, remainingInSql(iteration, day.date), 1e-9) << day.date;
      EXPECT_NEAR(day.logged, loggedInSql(iteration, day.date, day.date), 1e-9) << day.date;
      logged += day.logged;
    }
    EXPECT_DOUBLE_EQ(report->days.front().ideal, report->days.front().remaining);
    EXPECT_DOUBLE_EQ(report->days.back().ideal, 0);
    EXPECT_EQ(report->planned_points,
              int(sql("SELECT SUM(story_points) FROM stories WHERE iteration_id = ?1",
                      {int64_t{iteration}})));
    // Per story and per owner, the same hours are accounted once each.
    int tasks = 0;
    for (const StoryProgress& story : report->stories) tasks += story.tasks;
    EXPECT_EQ(tasks, int(sql("SELECT COUNT(*) FROM tasks t JOIN stories s ON s.id = t.story_id "
                             "WHERE s.iteration_id = ?1",
                             {int64_t{iteration}})));
    double owner_logged = 0, owner_remaining = 0;
    for (const OwnerLoad& owner : report->owners) {
      owner_logged += owner.logged;
      owner_remaining += owner.remaining;
    }
    EXPECT_NEAR(owner_logged, logged, 1e-9);
    EXPECT_NEAR(owner_remaining, report->days.back().remaining, 1e-9);
  }
  EXPECT_FALSE(reports.burndown(99999).has_value());
}

TEST_F(SamplesReports, VelocityAgreesWithTheBurndowns) {
  const ReportService reports(db_);
  const auto velocity = reports.velocity(2);
  ASSERT_TRUE(velocity);
  ASSERT_EQ(velocity->iterations.size(), 4u);
  double done = 0;
  for (const IterationVelocity& iteration : velocity->iterations) {
    const auto burndown = reports.burndown(iteration.iteration);
    ASSERT_TRUE(burndown);
    EXPECT_EQ(iteration.planned_points, burndown->planned_points);
    EXPECT_EQ(iteration.done_points, burndown->done_points);
    EXPECT_NEAR(iteration.remaining, burndown->days.back().remaining, 1e-9);
    EXPECT_NEAR(iteration.logged,
                loggedInSql(iteration.iteration, burndown->iteration.start_date,
                            burndown->iteration.end_date),
                1e-9);
    done += iteration.done_points;
  }
  EXPECT_DOUBLE_EQ(velocity->mean_done_points, done / 4);
  // A product's root backlog plans no iterations of its own.
  EXPECT_FALSE(reports.velocity(1).has_value());
}

TEST_F(SamplesReports, ReadModelCatchesUpWithWritesAfterItsMaxAge) {
  const ReportService stale(db_, std::chrono::hours(1));
  const ReportService fresh(db_, std::chrono::milliseconds(0));
  const auto before = fresh.burndown(1);
  ASSERT_TRUE(before);
  ASSERT_TRUE(stale.burndown(1));
  const std::string day = before->days[3].date;
  const int task =
      int(sql("SELECT MIN(t.id) FROM tasks t JOIN stories s ON s.id = t.story_id "
              "WHERE s.iteration_id = 1",
              {}));
  db_.execute("INSERT INTO hour_entries(task_id, user_id, hours, date) VALUES(?1, 1, 2.5, ?2)",
              {int64_t{task}, day});
  EXPECT_NEAR(fresh.burndown(1)->days[3].logged, before->days[3].logged + 2.5, 1e-9);
  EXPECT_NEAR(stale.burndown(1)->days[3].logged, before->days[3].logged, 1e-9);
}

TEST_F(SamplesReports, ServedOverHttp) {
  const ReportService reports(db_);
  ReportApi api(reports);
  httplib::Server server;
  api.registerRoutes(server);
  const int port = server.bind_to_any_port("127.0.0.1");
  std::thread thread([&] { server.listen_after_bind(); });
  for (int i = 0; i < 500 && !server.is_running(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  {
    httplib::Client client("127.0.0.1", port);
    auto burndown = client.Get("/iterations/1/burndown");
    ASSERT_TRUE(burndown);
    EXPECT_EQ(burndown->status, 200);
    const json body = json::parse(burndown->body, nullptr, false);
    EXPECT_EQ(body["iteration"], 1);
    EXPECT_EQ(body["days"].size(), 14u);
    EXPECT_NEAR(body["days"][13]["remaining"].get<double>(),
                remainingInSql(1, body["days"][13]["date"].get<std::string>()), 1e-9);
    auto velocity = client.Get("/backlogs/2/velocity");
    ASSERT_TRUE(velocity);
    EXPECT_EQ(json::parse(velocity->body)["iterations"].size(), 4u);
    auto missing = client.Get("/iterations/99999/burndown");
    ASSERT_TRUE(missing);
    EXPECT_EQ(missing->status, 404);
    auto root = client.Get("/backlogs/1/velocity");
    ASSERT_TRUE(root);
    EXPECT_EQ(root->status, 404);
  }
  server.stop();
  thread.join();
}

}  // namespace
}  // namespace agile
