// perfhat.collectionBudget and the budget code lenses over a real status file and pins file.
#include "server/server/budget_command.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

namespace perfhat::server {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

class BudgetCommand : public ::testing::Test {
 protected:
  BudgetCommand() {
    dir_ = std::filesystem::temp_directory_path() /
           ("perfhat_budget_cmd_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    files_ = {(dir_ / "status.json").string(), (dir_ / "pins").string()};
    // As libperfhat writes it (budget_controller.cc status_json): MaxF 995.2 reports/s.
    std::ofstream(files_.status) << R"({"budget_share":0.001,"mode":"rates","detect_ns":4,
      "report_ns":1000,"collector_fixed_cpu_per_s":0,"allowed_cpu_per_s":0.001,
      "process_cpu_per_s":1,"max_probe_hz":1000,"min_fraction":0.001,"max_f":995.2,
      "probing_hz":0,"value":995.2,"predicted_overhead":0.001,"measured_overhead":0.0009,
      "governor":1,"over_budget":false,"plan_changes":1,
      "classes":[{"name":"shop::A","frequency_hz":400,"duty_ratio":0.1,"weight":1,"pinned":false,
                  "traced":true,"fraction":1,"overhead":0.0004016},
                 {"name":"shop::B","frequency_hz":500,"duty_ratio":0.2,"weight":1,"pinned":false,
                  "traced":true,"fraction":1,"overhead":0.000502},
                 {"name":"shop::C","frequency_hz":300,"duty_ratio":0.05,"weight":1,
                  "pinned":false,"traced":false,"fraction":0.3173,"overhead":0.0000964}],
      "sample_weight_s":0,"sampled_functions":[],
      "functions":[{"function":"shop::C::run","class":"shop::C"}]})";
  }
  ~BudgetCommand() override { std::filesystem::remove_all(dir_); }
  std::string pins() const {
    std::ifstream in(files_.pins);
    std::stringstream t;
    t << in.rdbuf();
    return t.str();
  }
  std::filesystem::path dir_;
  BudgetFiles files_;
};

TEST_F(BudgetCommand, NoArgumentsAnswersTheExportedPlan) {
  const json r = collectionBudgetCommand(files_, json::array());
  ASSERT_EQ(r["plan"]["classes"].size(), 3u);
  EXPECT_EQ(r["plan"]["classes"][2]["name"], "shop::C");
  EXPECT_EQ(r["plan"]["classes"][2]["sampled"], true);
  EXPECT_DOUBLE_EQ(r["plan"]["predicted_overhead"].get<double>(), 0.001);
  EXPECT_FALSE(std::filesystem::exists(files_.pins));
}

TEST_F(BudgetCommand, AlwaysTraceReplansAtOnceAndWritesThePin) {
  const json r = collectionBudgetCommand(files_, json::array({"void shop::C::run(int)"}));
  EXPECT_EQ(r["plan"]["classes"][2]["traced"], true);
  EXPECT_EQ(r["plan"]["classes"][2]["pinned"], true);
  EXPECT_NEAR(r["plan"]["classes"][1]["fraction"].get<double>(), 295.2 / 500, 1e-9);
  EXPECT_NEAR(r["plan"]["predicted_overhead"].get<double>(), 0.001, 1e-9);
  EXPECT_THAT(r["message"].get<std::string>(),
              HasSubstr("Always trace shop::C::run (class shop::C): predicted collector overhead "
                        "0.1 % → 0.1 % of the process CPU"));
  EXPECT_THAT(r["message"].get<std::string>(), HasSubstr("shop::B: traced → sampled at 59 %"));
  EXPECT_EQ(r["pins_file"], files_.pins);
  EXPECT_THAT(pins(), HasSubstr("\nalways shop::C::run\n"));

  const json w =
      collectionBudgetCommand(files_, json::array({{{"weight", "shop::B"}, {"value", 4}}}));
  EXPECT_EQ(w["plan"]["classes"][1]["traced"], true);
  EXPECT_THAT(pins(), HasSubstr("always shop::C::run\nweight shop::B 4\n"));
}

TEST_F(BudgetCommand, BadArgumentsAndMissingStatusAreClearErrors) {
  EXPECT_THROW(collectionBudgetCommand(files_, json::array({42})), std::invalid_argument);
  EXPECT_THROW(collectionBudgetCommand(files_, json::array({"shop::Nope::f"})),
               std::invalid_argument);
  EXPECT_THROW(collectionBudgetCommand({(dir_ / "none.json").string(), ""}, json::array()),
               std::runtime_error);
  std::ofstream(files_.status) << "{not json";
  const auto bad = loadBudgetStatus(files_.status);
  EXPECT_FALSE(bad);
  EXPECT_THAT(bad.error, HasSubstr("status.json"));
  EXPECT_FALSE(std::filesystem::exists(files_.pins));
}

TEST_F(BudgetCommand, LensOnAListedFunctionOffersAlwaysTrace) {
  const auto loaded = loadBudgetStatus(files_.status);
  ASSERT_TRUE(loaded) << loaded.error;
  const auto& st = loaded.value;
  analysis::Snapshot s;
  analysis::FunctionInfo f;
  f.key = "void shop::C::run(int)";
  f.name_range = {{3, 5}, {3, 8}};
  s.functions.push_back(f);
  f.key = "void shop::Other::g()";
  s.functions.push_back(f);
  const auto lenses = budgetLenses(s, st);
  ASSERT_EQ(lenses.size(), 1u);
  EXPECT_EQ(lenses[0].title,
            "collection budget: shop::C sampled at 31.7 % · 0.00964 % CPU — always trace");
  EXPECT_EQ(lenses[0].command, kCollectionBudgetCommand);
  EXPECT_EQ(lenses[0].arguments, std::vector<std::string>{"shop::C::run"});
  EXPECT_EQ(lenses[0].range, f.name_range);
}

}  // namespace
}  // namespace perfhat::server
