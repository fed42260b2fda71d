#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "server/features/options_json.h"

namespace perfhat::features {
namespace {

TEST(FeaturesOptionsJson, RoundTripKeepsEveryField) {
  Options o;
  o.profile = Profile::Design;
  o.regression_relative = 0.5;
  o.regression_absolute_ns = 2e6;
  o.learn_thresholds = false;
  o.learned_relative_max = 1.5;
  o.hotspot_diagnostics = true;
  o.hotspot_share = 0.3;
  o.design_min_share = 0.2;
  o.main_statistic = "mean";
  const nlohmann::json j = o;
  EXPECT_EQ(j["profile"], "design");
  Options back;
  from_json(j, back);
  EXPECT_EQ(back.profile, Profile::Design);
  EXPECT_EQ(back.regression_relative, 0.5);
  EXPECT_EQ(back.regression_absolute_ns, 2e6);
  EXPECT_FALSE(back.learn_thresholds);
  EXPECT_EQ(back.learned_relative_max, 1.5);
  EXPECT_TRUE(back.hotspot_diagnostics);
  EXPECT_EQ(back.hotspot_share, 0.3);
  EXPECT_EQ(back.design_min_share, 0.2);
  EXPECT_EQ(back.main_statistic, "mean");
}

TEST(FeaturesOptionsJson, MissingKeysKeepBaseAndUnknownKeysAreIgnored) {
  Options base;
  base.hotspot_share = 0.7;
  const Options o = parseOptions(R"({"profile":"design","future_option":42})", base);
  EXPECT_EQ(o.profile, Profile::Design);
  EXPECT_EQ(o.hotspot_share, 0.7);
  EXPECT_EQ(o.main_statistic, "p50");
}

TEST(FeaturesOptionsJson, AcceptsCamelCaseKeysFromEditorSettings) {
  const Options o =
      parseOptions(R"({"regressionRelative":0.4,"learnThresholds":false,"mainStatistic":"mean"})");
  EXPECT_EQ(o.regression_relative, 0.4);
  EXPECT_FALSE(o.learn_thresholds);
  EXPECT_EQ(o.main_statistic, "mean");
  EXPECT_THROW(parseOptions(R"({"hotspotShare":"half"})"), OptionsError);
}

TEST(FeaturesOptionsJson, BadInputGetsAnErrorNamingTheKey) {
  auto message = [](const char* text) {
    try {
      parseOptions(text);
    } catch (const OptionsError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message(R"({"profile":"fast"})").find("'profile'"), std::string::npos);
  EXPECT_NE(message(R"({"hotspot_share":1.5})").find("'hotspot_share'"), std::string::npos);
  EXPECT_NE(message(R"({"regression_relative":-1})").find("out of range"), std::string::npos);
  EXPECT_NE(message(R"({"learn_thresholds":"yes"})").find("true or false"), std::string::npos);
  EXPECT_NE(message(R"({"main_statistic":"p42"})").find("'main_statistic'"), std::string::npos);
  EXPECT_NE(message(R"([1,2])").find("object"), std::string::npos);
  EXPECT_NE(message("{not json").find("malformed"), std::string::npos);
}

TEST(FeaturesOptionsJson, FailedParseLeavesOptionsUntouched) {
  Options o;
  EXPECT_THROW(from_json(nlohmann::json::parse(R"({"profile":"design","hotspot_share":9})"), o),
               OptionsError);
  EXPECT_EQ(o.profile, Profile::Debug);  // no half-applied configuration
}

}  // namespace
}  // namespace perfhat::features
