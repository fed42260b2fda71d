// The POST /v1/budget parser alone: what it keeps, and the field each refusal names.
#include "feedback-handler/budget/budget_status.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace perfhat::handler::budget {
namespace {

using nlohmann::json;

const char* kMinimal =
    R"({"service":"s","predicted_overhead":0.01,"classes":[{"name":"a","frequency_hz":5,)"
    R"("duty_ratio":0.1,"traced":true,"fraction":1,"overhead":0.01}],"extra":{"x":1}})";

std::string refusal(const json& j) {
  try {
    parseStatus(j.dump());
  } catch (const StatusError& e) {
    return e.what();
  }
  return "accepted";
}

TEST(BudgetStatus, KeepsTheKnownMembersAndDropsTheRest) {
  const Status s = parseStatus(kMinimal);
  EXPECT_EQ(s.service, "s");
  EXPECT_EQ(s.instance, "");
  const json j = json::parse(s.json);
  EXPECT_FALSE(j.contains("extra"));
  EXPECT_EQ(j["mode"], "rates");
  EXPECT_EQ(j["classes"][0]["name"], "a");
  EXPECT_TRUE(j["sampled_functions"].empty());
}

// The library's status since rates mode can leave classes undetected: what each class's cold
// probe entries cost, and whether it is detected at all, reach the editor's view.
TEST(BudgetStatus, KeepsDetectedColdEntriesAndTheMeans) {
  json j = json::parse(kMinimal);
  j["classes"][0]["detected"] = false;
  j["classes"][0]["cold_hz"] = 12.5;
  j["cold_ns"] = 480;
  j["measured_overhead_mean"] = 0.021;
  j["collector_share_mean"] = 0.012;
  const json out = json::parse(parseStatus(j.dump()).json);
  EXPECT_EQ(out["classes"][0]["detected"], false);
  EXPECT_EQ(out["classes"][0]["cold_hz"], 12.5);
  EXPECT_EQ(out["cold_ns"], 480);
  EXPECT_EQ(out["measured_overhead_mean"], 0.021);
  EXPECT_EQ(out["collector_share_mean"], 0.012);
  // Absent in an older library's status: still absent, not refused.
  const json old = json::parse(parseStatus(kMinimal).json);
  EXPECT_FALSE(old["classes"][0].contains("detected"));
  EXPECT_FALSE(old["classes"][0].contains("cold_hz"));
  j["classes"][0]["detected"] = "no";
  EXPECT_EQ(refusal(j), "classes[0].detected: must be true or false");
  j["classes"][0]["detected"] = true;
  j["classes"][0]["cold_hz"] = -1;
  EXPECT_EQ(refusal(j), "classes[0].cold_hz: must be a finite number in [0, 1e15]");
}

// The in-probe prices the library charged (budget_insitu.h) reach GET /v1/budget's status.
TEST(BudgetStatus, KeepsTheInSituPrices) {
  json j = json::parse(kMinimal);
  j["in_situ"] = {{"report_ns", 2600},       {"request_ns", 4100},   {"calibrated_report_ns", 73},
                  {"timed_report_ns", 2600}, {"timed_reports", 40},  {"timed_request_ns", 4100},
                  {"timed_requests", 33},    {"timed_passes", 5},    {"dropped", 2},
                  {"fence_ns", 21},          {"entry_fence_ns", 11}, {"unknown", 1}};
  const json out = json::parse(parseStatus(j.dump()).json);
  ASSERT_TRUE(out.contains("in_situ"));
  EXPECT_EQ(out["in_situ"]["report_ns"], 2600);
  EXPECT_EQ(out["in_situ"]["request_ns"], 4100);
  EXPECT_EQ(out["in_situ"]["calibrated_report_ns"], 73);
  EXPECT_EQ(out["in_situ"]["timed_reports"], 40);
  EXPECT_EQ(out["in_situ"]["timed_requests"], 33);
  EXPECT_EQ(out["in_situ"]["dropped"], 2);
  EXPECT_EQ(out["in_situ"]["timed_passes"], 5);
  EXPECT_EQ(out["in_situ"]["fence_ns"], 21);
  EXPECT_EQ(out["in_situ"]["entry_fence_ns"], 11);
  EXPECT_FALSE(out["in_situ"].contains("unknown"));
  EXPECT_FALSE(json::parse(parseStatus(kMinimal).json).contains("in_situ"));
  j["in_situ"]["report_ns"] = -1;
  EXPECT_EQ(refusal(j), "in_situ.report_ns: must be a finite number in [0, 1e15]");
  j["in_situ"] = 3;
  EXPECT_EQ(refusal(j), "in_situ: must be an object");
}

// The last window's prices and its charge by part reach GET /v1/budget's status: only the known
// members, each a finite number in [0, 1e15].
TEST(BudgetStatus, KeepsTheWindowsPricesAndCharge) {
  json j = json::parse(kMinimal);
  j["window_price_ns"] = {{"detect", 3.9}, {"report", 910}, {"counted", 14},
                          {"sample", 0},   {"cold", 150},   {"unknown", 1}};
  j["window_cost_s"] = {{"detect", 0.0006},  {"report", 0.0001}, {"counted", 0},
                        {"requests", 1e-05}, {"passed", 6e-05},  {"cold", 0.0009},
                        {"measuring", 0},    {"samples", 0},     {"collector", 0.0007},
                        {"unknown", 2}};
  const json out = json::parse(parseStatus(j.dump()).json);
  ASSERT_TRUE(out.contains("window_price_ns"));
  EXPECT_EQ(out["window_price_ns"]["report"], 910);
  EXPECT_EQ(out["window_price_ns"]["cold"], 150);
  EXPECT_EQ(out["window_price_ns"].size(), 5u);  // the unknown member is dropped
  ASSERT_TRUE(out.contains("window_cost_s"));
  EXPECT_EQ(out["window_cost_s"]["passed"], 6e-05);
  EXPECT_EQ(out["window_cost_s"]["collector"], 0.0007);
  EXPECT_EQ(out["window_cost_s"].size(), 9u);
  const json old = json::parse(parseStatus(kMinimal).json);  // an older library's: still absent
  EXPECT_FALSE(old.contains("window_price_ns"));
  EXPECT_FALSE(old.contains("window_cost_s"));
  j["window_cost_s"]["collector"] = -0.001;
  EXPECT_EQ(refusal(j), "window_cost_s.collector: must be a finite number in [0, 1e15]");
  j["window_cost_s"]["collector"] = 0;
  j["window_price_ns"]["report"] = 1e300;
  EXPECT_EQ(refusal(j), "window_price_ns.report: must be a finite number in [0, 1e15]");
  j["window_price_ns"] = {1, 2};
  EXPECT_EQ(refusal(j), "window_price_ns: must be an object");
}

TEST(BudgetStatus, RefusalsNameTheField) {
  json j = json::parse(kMinimal);
  j["classes"][0].erase("traced");
  EXPECT_EQ(refusal(j), "classes[0].traced: is missing");
  j = json::parse(kMinimal);
  j["classes"][0]["name"] = std::string(5000, 'n');
  EXPECT_EQ(refusal(j), "classes[0].name: is longer than 4096 bytes");
  j = json::parse(kMinimal);
  j["service"] = "a\nb";
  EXPECT_EQ(refusal(j), "service: holds a control character");
  j = json::parse(kMinimal);
  j["sampled_functions"] = {{{"function", "f"}, {"self", 1}}};
  EXPECT_EQ(refusal(j), "sampled_functions[0].samples: is missing");
  j = json::parse(kMinimal);
  j["over_budget"] = "no";
  EXPECT_EQ(refusal(j), "over_budget: must be true or false");
  EXPECT_EQ(refusal(json::array()), "status must be a JSON object");
  j = json::parse(kMinimal);
  j["sent_unix_ns"] = 1'790'000'000'000'000'000;  // the library's clock: accepted
  EXPECT_EQ(refusal(j), "accepted");
  j["sent_unix_ns"] = -1;
  EXPECT_EQ(refusal(j), "sent_unix_ns: must be a time in ns since the epoch");
}

}  // namespace
}  // namespace perfhat::handler::budget
