// The status body libperfhat sends to the handler (budget_publish.h): labels, the window, and
// the stack samples turned into estimated CPU time at the rate each was taken at.
#include "budget_publish.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace perfhat::budget {
namespace {

using nlohmann::json;

TEST(BudgetPublish, SamplesBecomeEstimatedCpuTimeAtTheRateTheyWereTakenAt) {
  StatusPublisher p;
  Plan plan;
  plan.probing = true;
  plan.probing_hz = 100;  // a sample stands for 10 ms
  Resource r;
  r.service_name = "shop";
  r.service_version = "2.0";
  r.host_name = "h";
  const std::string status = R"({"mode":"probing","classes":[],"sampled_functions":[]})";
  json j = json::parse(p.body(status, plan, {{"shop::Db::query()", 30, 10}}, r, 10, 1.0, 5));
  EXPECT_EQ(j["service"], "shop");
  EXPECT_EQ(j["version"], "2.0");
  EXPECT_EQ(j["instance"].get<std::string>().rfind("h/", 0), 0u);
  EXPECT_EQ(j["window_s"], 10);
  EXPECT_EQ(j["mode"], "probing");  // the controller's status is kept
  ASSERT_EQ(j["sampled_functions"].size(), 1u);
  EXPECT_DOUBLE_EQ(j["sampled_functions"][0]["estimated_cpu_s"].get<double>(), 0.30);
  EXPECT_DOUBLE_EQ(j["sampled_functions"][0]["estimated_self_cpu_s"].get<double>(), 0.10);
  // The rate doubles: the 20 samples drained before the next body were still taken at 100 Hz;
  // the 40 after it at 200 Hz.
  plan.probing_hz = 200;
  j = json::parse(p.body(status, plan, {{"shop::Db::query()", 50, 10}}, r, 10, 2.0, 6));
  EXPECT_DOUBLE_EQ(j["sampled_functions"][0]["estimated_cpu_s"].get<double>(), 0.50);
  j = json::parse(p.body(status, plan, {{"shop::Db::query()", 90, 30}}, r, 10, 3.0, 7));
  EXPECT_DOUBLE_EQ(j["sampled_functions"][0]["estimated_cpu_s"].get<double>(), 0.70);
  EXPECT_DOUBLE_EQ(j["sampled_functions"][0]["estimated_self_cpu_s"].get<double>(), 0.20);
  EXPECT_DOUBLE_EQ(j["sampling_wall_s"].get<double>(), 2.0);
}

// The controller's status without sample rows (what the engine sends) is completed as text: the
// same body as a status that is parsed, its own fields kept once each.
TEST(BudgetPublish, AStatusWithoutSampleRowsIsCompletedAsTheParsedOneIs) {
  Plan plan;
  plan.probing = true;
  plan.probing_hz = 100;
  Resource r;
  r.service_name = "shop";
  r.host_name = "h";
  const std::string bare = R"({"mode":"probing","classes":[{"name":"a"}],"functions":[]})";
  const std::string with_rows =
      R"({"mode":"probing","classes":[{"name":"a"}],"functions":[],"sampled_functions":[]})";
  StatusPublisher p1, p2;
  const std::string spliced = p1.body(bare, plan, {{"shop::Db::query()", 30, 10}}, r, 10, 1.0, 5);
  const json a = json::parse(spliced);
  const json b =
      json::parse(p2.body(with_rows, plan, {{"shop::Db::query()", 30, 10}}, r, 10, 1.0, 5));
  EXPECT_EQ(a, b);
  EXPECT_EQ(a["classes"][0]["name"], "a");
  EXPECT_DOUBLE_EQ(a["sampled_functions"][0]["estimated_cpu_s"].get<double>(), 0.30);
  // Each key once: the text is not a status with a second "mode" or "sampled_functions".
  EXPECT_EQ(spliced.find("\"mode\""), spliced.rfind("\"mode\""));
  EXPECT_EQ(spliced.find("\"sampled_functions\""), spliced.rfind("\"sampled_functions\""));
  // An empty status object still makes an object.
  StatusPublisher p3;
  EXPECT_TRUE(json::parse(p3.body("{}", plan, {}, r, 10, 1.0, 5)).is_object());
}

TEST(BudgetPublish, DueEveryIntervalAtOnceOnAPlanChangeAndRarelyAfterARefusal) {
  StatusPublisher p;
  EXPECT_TRUE(p.due(0, 0));
  p.sent(ExportResult::kSuccess, 0, 3);
  EXPECT_FALSE(p.due(1, 3));
  EXPECT_TRUE(p.due(1, 4));  // the editor's pin changed the plan: sent at the next tick
  EXPECT_TRUE(p.due(PublishTunables::kPublishInterval, 3));
  p.sent(ExportResult::kPermanentFailure, 10, 4);  // an older handler: 404
  EXPECT_FALSE(p.due(11, 5));
  EXPECT_FALSE(p.due(10 + PublishTunables::kRefusedRetry - 1, 5));
  EXPECT_TRUE(p.due(10 + PublishTunables::kRefusedRetry, 5));
}

}  // namespace
}  // namespace perfhat::budget
