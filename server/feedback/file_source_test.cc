#include "server/feedback/file_source.h"

#include <fstream>

#include <gtest/gtest.h>
#include <unistd.h>

namespace perfhat::feedback {
namespace {

const char* kDataset = R"js({"items":[
  {"key":"agile::Story::tasks() const","mangled":"_ZNK5agile5Story5tasksEv",
   "stats":{"count":10,"mean_ns":2e6,"p50_ns":2e6}},
  {"key":"agile::f(int)","stats":{"count":1,"mean_ns":1}},
  {"key":"agile::f(double)","stats":{"count":1,"mean_ns":2}}]})js";

class TempFile {
 public:
  explicit TempFile(const std::string& content) {
    char tmpl[] = "/tmp/perfhat-file-source-XXXXXX";
    int fd = mkstemp(tmpl);
    path_ = tmpl;
    close(fd);
    std::ofstream(path_) << content;
  }
  ~TempFile() { unlink(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(LspFileSource, AnswersByKeyMangledAndName) {
  TempFile f(kDataset);
  FileSource src(f.path());
  ASSERT_EQ(src.load(), std::nullopt);
  EXPECT_EQ(src.size(), 3u);
  auto r = src.batchGet(
      {"agile::Story::tasks() const", "_ZNK5agile5Story5tasksEv", "agile::f(long)", "nope()"});
  ASSERT_TRUE(r.ok());
  // tasks() once (deduplicated), both f overloads by name, nope() missing.
  EXPECT_EQ(r.response.items.size(), 3u);
  ASSERT_EQ(r.response.missing.size(), 1u);
  EXPECT_EQ(r.response.missing[0], "nope()");
}

TEST(LspFileSource, MissingFileIsAClearError) {
  FileSource src("/nonexistent/perfhat/data.json");
  auto err = src.load();
  ASSERT_TRUE(err);
  EXPECT_NE(err->find("cannot open feedback file"), std::string::npos);
  auto r = src.batchGet({"a()"});
  EXPECT_EQ(r.status, FetchStatus::BadResponse);
  EXPECT_FALSE(r.error.empty());
}

TEST(LspFileSource, CorruptFileKeepsPreviousDataAndReportsIt) {
  TempFile f(kDataset);
  FileSource src(f.path());
  ASSERT_EQ(src.load(), std::nullopt);
  std::ofstream(f.path()) << R"js({"items":[{"key":"x()","stats":{"count":"many"}}]})js";
  auto err = src.load();
  ASSERT_TRUE(err);
  EXPECT_NE(err->find(f.path()), std::string::npos);
  EXPECT_EQ(src.size(), 3u);  // still serving the last good data
  EXPECT_TRUE(src.batchGet({"agile::f(int)"}).ok());
}

TEST(LspFileSource, CorruptFileFromTheStartServesNothingButDoesNotThrow) {
  TempFile f("{\"items\": [ {\"key\": ");
  FileSource src(f.path());
  EXPECT_TRUE(src.load());
  EXPECT_EQ(src.batchGet({"a()"}).status, FetchStatus::BadResponse);
}

TEST(LspFileSource, ReloadChangesTheCursor) {
  TempFile f(kDataset);
  FileSource src(f.path());
  ASSERT_EQ(src.load(), std::nullopt);
  std::string c1 = src.changes("").cursor;
  EXPECT_FALSE(src.changes(c1).all);
  ASSERT_EQ(src.load(), std::nullopt);
  EXPECT_TRUE(src.changes(c1).all);
}

}  // namespace
}  // namespace perfhat::feedback
