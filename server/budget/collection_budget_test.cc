#include "server/budget/collection_budget.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace perfhat::collection_budget {
namespace {

using nlohmann::json;

// Three classes of 400, 500 and 300 calls/s; reports cost 1 µs, detection 4 ns; the plan may
// spend 1 ms of CPU per second: MaxF = (1e-3 − 1200 × 4e-9) / 1e-6 = 995.2 reports/s.
json status() {
  return json::parse(R"({"budget_share":0.001,"mode":"rates","detect_ns":4,"report_ns":1000,
    "allowed_cpu_per_s":0.001,"process_cpu_per_s":1,"max_probe_hz":1000,"min_fraction":0.001,
    "max_f":995.2,"predicted_overhead":0.001,"governor":1,"over_budget":false,
    "classes":[{"name":"a","frequency_hz":400,"duty_ratio":0.1,"weight":1,"traced":true,"fraction":1},
               {"name":"b","frequency_hz":500,"duty_ratio":0.2,"weight":1,"traced":true,"fraction":1},
               {"name":"c","frequency_hz":300,"duty_ratio":0.05,"weight":1,"fraction":0.317}],
    "functions":[{"function":"shop::C::run","class":"c"},{"function":"shop::A::go","class":"a"}]})");
}

const budget::ClassPlan& byName(const budget::Plan& p, const std::string& name) {
  for (const auto& k : p.classes)
    if (k.name == name) return k;
  throw std::runtime_error("no class " + name);
}

TEST(CollectionBudget, PinningAFunctionTracesItsClassAndTheOthersGiveWay) {
  const Status s = parseStatus(status());
  ASSERT_EQ(s.plan.classes.size(), 3u);
  EXPECT_EQ(classOf(s, "shop::C::run"), "c");
  EXPECT_EQ(classOf(s, "void shop::C::run(int) const"), "c");  // the editor's function key
  EXPECT_EQ(qualifiedName("std::vector<int, A<B> > ns::f<x y>(int)"), "ns::f<x y>");

  const budget::Plan p = replan(s, {Change::Kind::kAlways, "shop::C::run", 1});
  const auto& c = byName(p, "c");
  EXPECT_TRUE(c.pinned);
  EXPECT_TRUE(c.traced);
  EXPECT_DOUBLE_EQ(c.fraction, 1);
  EXPECT_DOUBLE_EQ(byName(p, "a").fraction, 1);  // first by input order among equal weights
  // b keeps what is left: 995.2 − 300 − 400 reports/s of its 500 calls/s.
  EXPECT_NEAR(byName(p, "b").fraction, 295.2 / 500, 1e-9);
  EXPECT_FALSE(p.over_budget);
  EXPECT_NEAR(p.predicted_overhead, 0.001, 1e-9);  // the whole budget, no more
  const json j = planJson(p);
  EXPECT_EQ(j["classes"][1]["sampled"], true);
  EXPECT_EQ(j["mode"], "rates");
}

TEST(CollectionBudget, RaisingAClassWeightMovesTheBudgetToIt) {
  const Status s = parseStatus(status());
  const budget::Plan p = replan(s, {Change::Kind::kWeight, "c", 5});
  EXPECT_DOUBLE_EQ(byName(p, "c").fraction, 1);
  EXPECT_DOUBLE_EQ(byName(p, "c").weight, 5);
  EXPECT_LT(byName(p, "b").fraction, 1);
}

// Probing mode: the library prices a stack sample at what it measured (sample_ns, tens of µs
// where a traced event costs one); the editor's re-plan buys samples at that price too, so the
// plan it shows keeps to the budget.
TEST(CollectionBudget, ReplanPricesStackSamplesAtTheMeasuredCost) {
  json j = status();
  j["mode"] = "probing";
  const budget::Plan unpriced = replan(parseStatus(j), {Change::Kind::kAlways, "shop::C::run", 1});
  j["sample_ns"] = 10040;  // ten traced events (4 ns + 1 µs)
  const Status s = parseStatus(j);
  EXPECT_DOUBLE_EQ(s.sample_ns, 10040);
  const budget::Plan p = replan(s, {Change::Kind::kAlways, "shop::C::run", 1});
  EXPECT_TRUE(byName(p, "c").traced);
  ASSERT_GT(unpriced.probing_hz, 0);
  EXPECT_GT(p.probing_hz, 0);
  EXPECT_LT(p.probing_hz, unpriced.probing_hz / 5);
  double cost = p.probing_hz * 10040e-9;
  for (const auto& k : p.classes)
    if (k.traced) cost += k.frequency_hz * 1004e-9;
  EXPECT_LE(cost, 0.001 * (1 + 1e-9));  // the samples at their price, within the budget
  // An older library's status has no sample_ns: a sample is priced as a traced event.
  EXPECT_DOUBLE_EQ(parseStatus(status()).sample_ns, 0);
}

// Rates mode prices each detected class's cold probe entries (cold_hz × cold_ns) and may leave
// classes undetected when detecting them all does not fit; the editor's what-if plan must price
// them the same way, and its view shows both.
TEST(CollectionBudget, ReplanPricesColdEntriesAndShowsWhatIsDetected) {
  json j = status();
  j["cold_ns"] = 500;
  j["classes"][0]["cold_hz"] = 1000;  // a: 0.5 ms/s of cold entries, half the budget
  j["classes"][2]["detected"] = false;
  const Status s = parseStatus(j);
  EXPECT_DOUBLE_EQ(s.cold_ns, 500);
  EXPECT_DOUBLE_EQ(byName(s.plan, "a").cold_hz, 1000);
  EXPECT_FALSE(byName(s.plan, "c").detected);
  EXPECT_TRUE(byName(s.plan, "b").detected);  // absent: detected, as an older status meant
  const budget::Plan p = replan(s, {Change::Kind::kWeight, "b", 2});
  // MaxF = (1e-3 − 1200 × 4e-9 − 0.5e-3) / 1e-6 = 495.2: b (weight 2) takes it, a its floor.
  EXPECT_NEAR(byName(p, "b").fraction, (495.2 - 0.3 - 0.4) / 500, 1e-9);
  EXPECT_NEAR(p.predicted_overhead, 0.001, 1e-9);
  const json view = planJson(p);
  EXPECT_EQ(view["classes"][0]["cold_hz"], 1000);
  EXPECT_EQ(view["classes"][0]["detected"], true);
}

TEST(CollectionBudget, PinsOverTheBudgetSayOverBudget) {
  json j = status();
  j["allowed_cpu_per_s"] = 0.0001;  // MaxF 95.2: c alone does not fit
  const budget::Plan p = replan(parseStatus(j), {Change::Kind::kAlways, "shop::C::run", 1});
  EXPECT_TRUE(p.over_budget);
  EXPECT_TRUE(byName(p, "c").traced);
  EXPECT_GT(p.predicted_overhead, 0.0001);
}

TEST(CollectionBudget, BadStatusAndUnknownTargetsNameWhatIsWrong) {
  json j = status();
  j.erase("classes");
  EXPECT_THROW(
      {
        try {
          parseStatus(j);
        } catch (const StatusError& e) {
          EXPECT_NE(std::string(e.what()).find("status.classes"), std::string::npos);
          throw;
        }
      },
      StatusError);
  j = status();
  j["classes"][1]["frequency_hz"] = "fast";
  try {
    parseStatus(j);
    ADD_FAILURE();
  } catch (const StatusError& e) {
    EXPECT_EQ(std::string(e.what()),
              "status.classes[1].frequency_hz must be a non-negative number");
  }
  EXPECT_THROW(replan(parseStatus(status()), {Change::Kind::kAlways, "shop::Nope::f", 1}),
               StatusError);
  EXPECT_THROW(replan(parseStatus(status()), {Change::Kind::kWeight, "zz", 2}), StatusError);
  EXPECT_THROW(pinLine({Change::Kind::kAlways, "f\nweight a 9", 1}), StatusError);
  EXPECT_THROW(pinLine({Change::Kind::kWeight, "a b", 1}), StatusError);
}

TEST(CollectionBudget, PinsFileKeepsOtherLinesAndReplacesTheSameTarget) {
  const auto dir =
      std::filesystem::temp_directory_path() /
      ("perfhat_pins_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "pins").string();
  std::ofstream(path) << "# mine\nalways other::f*   # keep\n";
  writePin(path, {Change::Kind::kWeight, "a", 3});
  writePin(path, {Change::Kind::kAlways, "shop::C::run", 1});
  writePin(path, {Change::Kind::kWeight, "a", 0.5});
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "# mine\nalways other::f*   # keep\nalways shop::C::run\nweight a 0.5\n");
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  std::filesystem::remove_all(dir);
}

// A status file carries stack-sample counts and one sample's weight; the handler's copy carries
// the library's estimates. Either way the view says they are estimated from samples.
TEST(CollectionBudget, StackSamplesBecomeEstimatesByQualifiedName) {
  json j = status();
  j["sample_weight_s"] = 0.01;
  j["sampled_functions"] = {{{"function", "int shop::C::run(int)"}, {"samples", 40}, {"self", 5}},
                            {{"function", "shop::A::go()"},
                             {"samples", 3},
                             {"estimated_cpu_s", 0.5},
                             {"estimated_self_cpu_s", 0.1}}};
  j["sampling_wall_s"] = 10;
  const Status s = parseStatus(j);
  const SampledEstimate* run = sampledOf(s, "void shop::C::run(int) const");
  ASSERT_NE(run, nullptr);
  EXPECT_DOUBLE_EQ(run->cpu_s, 0.4);  // 40 samples × 10 ms
  EXPECT_DOUBLE_EQ(run->self_cpu_s, 0.05);
  EXPECT_DOUBLE_EQ(sampledOf(s, "shop::A::go")->cpu_s, 0.5);  // the library's own estimate
  EXPECT_EQ(sampledOf(s, "shop::B::none"), nullptr);
  const json rows = sampledJson(s);
  EXPECT_EQ(rows[0]["estimated"], "from stack samples");
  EXPECT_DOUBLE_EQ(rows[0]["cpu_per_s"].get<double>(), 0.04);
  j["sampled_functions"][0]["samples"] = -1;
  EXPECT_THROW(parseStatus(j), StatusError);
}

}  // namespace
}  // namespace perfhat::collection_budget
