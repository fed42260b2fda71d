#include "server/server/config.h"

#include <filesystem>
#include <fstream>
#include <map>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace perfhat::server {
namespace {

using nlohmann::json;

TEST(LspConfig, DefaultsAreThePerformanceHatValues) {
  Config c = ConfigLayers{}.resolve();
  EXPECT_EQ(c.cache.max_entries, 10000u);
  EXPECT_EQ(c.cache.ttl, std::chrono::seconds(600));
  EXPECT_EQ(c.features.profile, features::Profile::Debug);
}

TEST(LspConfig, PrecedenceCliOverEnvOverClientOverProject) {
  ConfigLayers l;
  l.project = json::parse(R"js({"handler":"http://project","token":"p","profile":"design",
                               "cache":{"maxEntries":5,"ttlSeconds":7},"feedbackFile":"f.json"})js");
  l.client = json::parse(R"js({"handler":"http://client","token":"c"})js");
  std::map<std::string, std::string> env = {{"PERFHAT_HANDLER", "http://env"},
                                            {"PERFHAT_CACHE_TTL_S", "99"}};
  l.env = envLayer([&](const char* k) -> const char* {
    auto it = env.find(k);
    return it == env.end() ? nullptr : it->second.c_str();
  });
  l.cli = json{{"handler", "http://cli"}};
  std::vector<std::string> w;
  Config c = l.resolve(&w);
  EXPECT_TRUE(w.empty());
  EXPECT_EQ(c.handler_url, "http://cli");
  EXPECT_EQ(c.token, "c");
  EXPECT_EQ(c.feedback_file, "f.json");
  EXPECT_EQ(c.features.profile, features::Profile::Design);
  EXPECT_EQ(c.cache.max_entries, 5u);
  EXPECT_EQ(c.cache.ttl, std::chrono::seconds(99));
}

TEST(LspConfig, BadValuesWarnAndKeepTheLowerLayer) {
  ConfigLayers l;
  l.project = json::parse(R"js({"cache":{"maxEntries":50}})js");
  l.client = json::parse(
      R"js({"cache":{"maxEntries":"lots"},"profile":"fast","debounce":{"minMs":-1}})js");
  std::vector<std::string> w;
  Config c = l.resolve(&w);
  EXPECT_EQ(c.cache.max_entries, 50u);
  EXPECT_EQ(c.debounce_min_ms, 50);
  ASSERT_EQ(w.size(), 3u);
  EXPECT_THAT(w, ::testing::Contains(::testing::HasSubstr("cache.maxEntries")));
  EXPECT_THAT(w, ::testing::Contains(::testing::HasSubstr("profile")));
}

TEST(LspConfig, NumbersOutOfRangeOrFractionalWarn) {
  ConfigLayers l;
  l.client = json::parse(R"js({"cache":{"maxEntries":1e99},"debounce":{"minMs":2.5}})js");
  std::vector<std::string> w;
  Config c = l.resolve(&w);
  EXPECT_EQ(c.cache.max_entries, Config().cache.max_entries);
  EXPECT_EQ(c.debounce_min_ms, Config().debounce_min_ms);
  EXPECT_THAT(w, ::testing::Contains(::testing::HasSubstr("cache.maxEntries\" must be a whole")));
  EXPECT_THAT(w, ::testing::Contains(::testing::HasSubstr("debounce.minMs")));
}

TEST(LspConfig, EnvWithAMalformedNumberIsReported) {
  ConfigLayers l;
  l.env = envLayer([](const char* k) -> const char* {
    return std::string(k) == "PERFHAT_CACHE_MAX_ENTRIES" ? "ten" : nullptr;
  });
  std::vector<std::string> w;
  l.resolve(&w);
  ASSERT_EQ(w.size(), 1u);
}

TEST(LspConfig, MaxParsedDocumentsFromSettingsOrEnvAndAtLeastOne) {
  ConfigLayers l;
  l.project = json::parse(R"js({"maxParsedDocuments":3})js");
  EXPECT_EQ(l.resolve().max_parsed_documents, 3);
  l.env = envLayer([](const char* k) -> const char* {
    return std::string(k) == "PERFHAT_MAX_PARSED_DOCUMENTS" ? "5" : nullptr;
  });
  EXPECT_EQ(l.resolve().max_parsed_documents, 5);
  l.cli = json::parse(R"js({"maxParsedDocuments":0})js");
  std::vector<std::string> w;
  EXPECT_EQ(l.resolve(&w).max_parsed_documents, 5) << "0 would release the edited document";
  EXPECT_THAT(w,
              ::testing::Contains(::testing::HasSubstr("maxParsedDocuments\" must be at least 1")));
}

TEST(LspConfig, ProjectFileMissingCorruptAndGood) {
  auto dir = std::filesystem::temp_directory_path() /
             ("perfhat-config-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::optional<std::string> err;
  EXPECT_EQ(loadProjectFile(dir.string(), &err), json::object());
  EXPECT_FALSE(err);
  std::ofstream(dir / ".perfhat.json") << "{ not json";
  EXPECT_EQ(loadProjectFile(dir.string(), &err), json::object());
  ASSERT_TRUE(err);
  EXPECT_NE(err->find(".perfhat.json"), std::string::npos);
  std::ofstream(dir / ".perfhat.json") << R"js({"profile":"design"})js";
  err.reset();
  EXPECT_EQ(loadProjectFile(dir.string(), &err)["profile"], "design");
  EXPECT_FALSE(err);
  std::filesystem::remove_all(dir);
}

TEST(LspConfig, ClientSettingsNestedOrFlat) {
  EXPECT_EQ(clientSettings(json::parse(R"js({"perfhat":{"profile":"design"}})js"))["profile"],
            "design");
  EXPECT_EQ(clientSettings(json::parse(R"js({"profile":"debug"})js"))["profile"], "debug");
  EXPECT_EQ(clientSettings(json(3)), json::object());
}

}  // namespace
}  // namespace perfhat::server
