#include "plan/release_history.h"

#include <gtest/gtest.h>

#include <unistd.h>
#include <filesystem>
#include <fstream>

namespace perfhat::plan {
namespace {

namespace fs = std::filesystem;

class ReleaseHistoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("perfhat-plan-history-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  static nlohmann::ordered_json manifest(std::vector<std::vector<std::string>> variants) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < variants.size(); ++i)
      list.push_back({{"id", i}, {"units", variants[i]}});
    return {{"release", "x"}, {"variants", list}};
  }
  fs::path dir_;
};

TEST_F(ReleaseHistoryTest, MissingDirectoryIsAnEmptyHistory) {
  History h = readHistory(dir_.string(), {"a", "b"});
  ASSERT_TRUE(h.ok()) << h.error;
  EXPECT_TRUE(h.releases.empty());
  EXPECT_EQ(h.counts, (std::vector<std::uint64_t>{0, 0}));
  EXPECT_EQ(nextReleaseId(h), "1");
}

TEST_F(ReleaseHistoryTest, CountsEveryVariantOfEveryRelease) {
  ASSERT_EQ(appendRelease(dir_.string(), "1", manifest({{"a", "b"}, {"b", "gone()"}})), "");
  ASSERT_EQ(appendRelease(dir_.string(), "2", manifest({{"b", "c(int, char)"}})), "");
  History h = readHistory(dir_.string(), {"a", "b", "c(int, char)", "new"});
  ASSERT_TRUE(h.ok()) << h.error;
  EXPECT_EQ(h.releases, (std::vector<std::string>{"1", "2"}));
  EXPECT_EQ(h.counts, (std::vector<std::uint64_t>{1, 3, 1, 0}));
  EXPECT_EQ(nextReleaseId(h), "3");
}

TEST_F(ReleaseHistoryTest, AnExistingReleaseIsNeverReplaced) {
  ASSERT_EQ(appendRelease(dir_.string(), "v1", manifest({{"a"}})), "");
  EXPECT_NE(appendRelease(dir_.string(), "v1", manifest({{"b"}})).find("already"),
            std::string::npos);
  EXPECT_EQ(readHistory(dir_.string(), {"a", "b"}).counts, (std::vector<std::uint64_t>{1, 0}));
}

TEST_F(ReleaseHistoryTest, ACorruptReleaseNamesItsFile) {
  fs::create_directories(dir_);
  std::ofstream(dir_ / "release-7.json") << "{not json";
  History h = readHistory(dir_.string(), {"a"});
  EXPECT_NE(h.error.find("release-7.json"), std::string::npos) << h.error;
  std::ofstream(dir_ / "release-7.json", std::ios::trunc) << R"({"variants":[{"units":[1]}]})";
  EXPECT_NE(readHistory(dir_.string(), {"a"}).error.find("not a string"), std::string::npos);
}

TEST(ReleaseId, Validation) {
  EXPECT_TRUE(validReleaseId("2026.11-rc_1"));
  EXPECT_FALSE(validReleaseId(""));
  EXPECT_FALSE(validReleaseId("../x"));
  EXPECT_FALSE(validReleaseId(".hidden"));
  EXPECT_FALSE(validReleaseId("a b"));
  EXPECT_FALSE(validReleaseId(std::string(65, 'a')));
}

}  // namespace
}  // namespace perfhat::plan
