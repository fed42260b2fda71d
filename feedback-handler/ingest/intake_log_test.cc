// The intake log (intake_log.h): appends read back in order with their ids and formats; ids go
// on across reopenings; a torn or corrupt tail is cut off and later appends follow the last good
// record; records at or below the checkpointed id are not returned.
#include "feedback-handler/ingest/intake_log.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "feedback-handler/store/sqlite.h"

namespace perfhat::handler {
namespace {

namespace fs = std::filesystem;

struct TempLog {
  fs::path dir = fs::temp_directory_path() / ("perfhat-intake-test-" + std::to_string(getpid()));
  TempLog() {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~TempLog() { fs::remove_all(dir); }
  std::string path() const { return (dir / "s.sqlite-intake").string(); }
};

std::vector<std::string> bodiesOf(const std::vector<IntakeRecord>& rs) {
  std::vector<std::string> out;
  out.reserve(rs.size());
  for (const auto& r : rs) out.push_back(r.body);
  return out;
}

TEST(IntakeLog, AppendsReadBackInOrderAcrossReopenings) {
  TempLog t;
  const std::string big(200000, 'b');  // bodies are written from where they are, any size
  {
    IntakeLog log(t.path());
    EXPECT_TRUE(log.recover(0).empty());
    EXPECT_EQ(log.append({{1, "one"}, {2, big}}), 2);
    EXPECT_EQ(log.append({{1, ""}}), 3);
  }
  IntakeLog log(t.path());
  std::vector<IntakeRecord> rs = log.recover(0);
  ASSERT_EQ(rs.size(), 3u);
  EXPECT_EQ(bodiesOf(rs), (std::vector<std::string>{"one", big, ""}));
  EXPECT_EQ(rs[1].id, 2);
  EXPECT_EQ(rs[1].format, 2);
  EXPECT_EQ(log.append({{1, "four"}}), 4) << "ids continue after a reopening";
}

TEST(IntakeLog, RecordsACheckpointCoveredAreSkippedAndIdsStayAboveIt) {
  TempLog t;
  {
    IntakeLog log(t.path());
    log.recover(0);
    log.append({{1, "a"}, {1, "b"}, {1, "c"}});
  }
  {
    IntakeLog log(t.path());
    EXPECT_EQ(bodiesOf(log.recover(2)), std::vector<std::string>{"c"});
    log.clear();
  }
  IntakeLog emptied(t.path());
  EXPECT_TRUE(emptied.recover(10).empty());
  EXPECT_EQ(emptied.append({{1, "d"}}), 11) << "never reuses an id the store has seen";
}

TEST(IntakeLog, ATornOrCorruptTailIsCutOffAndAppendsFollowTheLastGoodRecord) {
  TempLog t;
  {
    IntakeLog log(t.path());
    log.recover(0);
    log.append({{1, "good-1"}, {1, "good-2"}});
  }
  const auto good_size = fs::file_size(t.path());
  {
    IntakeLog log(t.path());
    log.recover(0);
    log.append({{1, "flipped"}});
  }
  {
    // Damage the last record's body: its CRC no longer checks.
    std::fstream f(t.path(), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-2, std::ios::end);
    f.put('X');
  }
  EXPECT_EQ(IntakeLog::peek(t.path(), 0).size(), 2u) << "peek stops at the damage too";
  {
    IntakeLog log(t.path());
    EXPECT_EQ(bodiesOf(log.recover(0)), (std::vector<std::string>{"good-1", "good-2"}));
    EXPECT_EQ(fs::file_size(t.path()), good_size);
    log.append({{1, "after"}});
  }
  {
    IntakeLog again(t.path());
    EXPECT_EQ(bodiesOf(again.recover(0)), (std::vector<std::string>{"good-1", "good-2", "after"}));
  }

  // A header whose length runs past the end (an append cut short).
  std::ofstream(t.path(), std::ios::app | std::ios::binary) << std::string("\xff\x00\x00\x00", 4);
  IntakeLog torn(t.path());
  EXPECT_EQ(torn.recover(0).size(), 3u);
}

TEST(IntakeLog, ASecondWriterIsRefused) {
  TempLog t;
  IntakeLog first(t.path());
  first.recover(0);
  try {
    IntakeLog second(t.path());  // flock is per open file: refused even in one process
    FAIL() << "two writers on one log";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("in use by another process"), std::string::npos)
        << e.what();
  }
  first.append({{1, "still fine"}});
}

TEST(IntakeLog, UnwritableLocationIsAClearError) {
  try {
    IntakeLog log("/nonexistent-dir/for/perfhat/s.sqlite-intake");
    FAIL() << "opened a log in a missing directory";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/for/perfhat"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace perfhat::handler
