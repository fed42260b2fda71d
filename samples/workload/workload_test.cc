#include "samples/workload/workload.h"

#include <gtest/gtest.h>

#include "samples/agile/test_support.h"

namespace agile::workload {
namespace {

TEST(SamplesWorkload, LoadShapesFollowTheirDefinition) {
  LoadShape load;
  load.base_rate = 10;
  load.shape = Shape::kStationary;
  EXPECT_DOUBLE_EQ(load.rateAt(0), 10);
  EXPECT_DOUBLE_EQ(load.rateAt(123), 10);

  load.shape = Shape::kSeasonal;
  load.period_s = 40;
  EXPECT_NEAR(load.rateAt(0), 10, 1e-9);
  EXPECT_NEAR(load.rateAt(10), 16, 1e-9);  // peak at a quarter period
  EXPECT_NEAR(load.rateAt(30), 4, 1e-9);   // trough at three quarters

  load.shape = Shape::kBursts;
  load.burst_every_s = 10;
  load.burst_length_s = 2;
  load.burst_factor = 5;
  EXPECT_DOUBLE_EQ(load.rateAt(1), 10);
  EXPECT_DOUBLE_EQ(load.rateAt(8.5), 50);
  EXPECT_DOUBLE_EQ(load.rateAt(11), 10);

  EXPECT_EQ(parseShape("bursts"), Shape::kBursts);
  EXPECT_FALSE(parseShape("weekly").has_value());
}

TEST(SamplesWorkload, SessionsFollowTheirNavigationPattern) {
  Catalog catalog;
  catalog.backlogs = {2};
  catalog.root_backlogs = {1};
  catalog.iterations = {5};
  catalog.iterations_of_backlog[2] = {5};
  catalog.stories = {9};
  std::mt19937 random(1);
  Session developer(Session::Kind::kDeveloper, catalog, random);
  EXPECT_EQ(developer.next("")->path, "/iterations/5/summary");
  EXPECT_EQ(developer.next("{}")->path, "/stories/9");
  // The task comes from the story page the service returned.
  EXPECT_EQ(developer.next(R"({"tasks":[{"id":44}]})")->path, "/tasks/44");
  const auto log = developer.next("{}");
  EXPECT_EQ(log->method, "POST");
  EXPECT_EQ(log->path, "/tasks/44/hours");
  EXPECT_EQ(developer.next("{}")->path, "/stories/9/effort");
  EXPECT_FALSE(developer.next("{}").has_value());

  Session planner(Session::Kind::kPlanner, catalog, random);
  EXPECT_EQ(planner.next("")->path, "/products");
  EXPECT_EQ(planner.next("[]")->path, "/backlogs/2");
  EXPECT_EQ(planner.next("{}")->path, "/iterations/5");
}

TEST(SamplesWorkload, MixPicksOnlyWeightedPatterns) {
  std::mt19937 random(3);
  PatternMix only_managers{0, 0, 1};
  for (int i = 0; i < 50; ++i) EXPECT_EQ(pickKind(only_managers, random), Session::Kind::kManager);
  // The CPU-bound analyst pattern is opt-in: the default mix never picks it.
  for (int i = 0; i < 500; ++i) EXPECT_NE(pickKind(PatternMix{}, random), Session::Kind::kAnalyst);
  PatternMix only_analysts{0, 0, 0, 1};
  for (int i = 0; i < 50; ++i) EXPECT_EQ(pickKind(only_analysts, random), Session::Kind::kAnalyst);
}

TEST(SamplesWorkload, AnalystsReadReports) {
  Catalog catalog;
  catalog.backlogs = {1, 2};
  catalog.root_backlogs = {1};
  catalog.iterations = {5, 6};
  catalog.iterations_of_backlog[1] = {};
  catalog.iterations_of_backlog[2] = {6};
  catalog.stories = {9};
  std::mt19937 random(1);
  Session analyst(Session::Kind::kAnalyst, catalog, random);
  EXPECT_EQ(analyst.next("")->route, "GET /iterations/{id}/burndown");
  // Only a backlog that plans iterations has a velocity.
  EXPECT_EQ(analyst.next("{}")->path, "/backlogs/2/velocity");
  EXPECT_EQ(analyst.next("{}")->path, "/iterations/6/burndown");
  EXPECT_FALSE(analyst.next("{}").has_value());
}

TEST(SamplesWorkload, RunIsBoundedAndReachesEveryPattern) {
  agile::testing::ServiceFixture service;
  RunConfig config;
  config.target = service.url();
  config.load.shape = Shape::kStationary;
  config.load.base_rate = 400;
  config.max_requests = 120;
  config.duration = std::chrono::seconds(60);
  config.workers = 3;
  config.progress = false;
  const RunReport report = run(config, [](const std::string&) {});
  EXPECT_EQ(report.sent, 120u);
  EXPECT_EQ(report.errors, 0u);
  EXPECT_TRUE(report.routes.count("GET /stories/{id}"));
  EXPECT_TRUE(report.routes.count("GET /products"));
  EXPECT_TRUE(report.routes.count("GET /iterations/{id}"));
}

TEST(SamplesWorkload, UnreachableTargetIsAClearError) {
  // Port 1 on loopback: nothing listens there in a test environment.
  EXPECT_THROW(discover("http://127.0.0.1:1"), std::runtime_error);
}

}  // namespace
}  // namespace agile::workload
