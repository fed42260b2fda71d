// The intake log (intake_log.h): appends read back in order with their ids and formats; ids go
// on across reopenings; a torn tail is cut off and later appends follow the last good record;
// damage anywhere costs only the records it touches; old-format logs still replay; records at or
// below the checkpointed id are not returned.
#include "feedback-handler/ingest/intake_log.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "common/crc32.h"

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

TEST(IntakeLog, ADamagedLastRecordIsSkippedAloneAndATornTailIsCutOff) {
  TempLog t;
  {
    IntakeLog log(t.path());
    log.recover(0);
    log.append({{1, "good-1"}, {1, "good-2"}});
  }
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
  EXPECT_EQ(IntakeLog::peek(t.path(), 0).size(), 2u) << "peek skips the damage too";
  {
    IntakeLog log(t.path());
    EXPECT_EQ(bodiesOf(log.recover(0)), (std::vector<std::string>{"good-1", "good-2"}));
    EXPECT_EQ(log.damage().records, 1u);
    EXPECT_EQ(log.append({{1, "after"}}), 4) << "the damaged record's id is not reused";
  }
  {
    IntakeLog again(t.path());
    EXPECT_EQ(bodiesOf(again.recover(0)), (std::vector<std::string>{"good-1", "good-2", "after"}));
  }

  // A header cut short, and a whole header whose body was never written (appends cut short).
  const auto complete = fs::file_size(t.path());
  std::ofstream(t.path(), std::ios::app | std::ios::binary) << std::string("PHr2\xff\x00", 6);
  {
    IntakeLog torn(t.path());
    EXPECT_EQ(torn.recover(0).size(), 3u);
    EXPECT_EQ(fs::file_size(t.path()), complete);
    EXPECT_EQ(torn.damage().records, 1u) << "the damaged record, still there; a torn tail is not";
    torn.append({{1, std::string(100, 'x')}});
  }
  fs::resize_file(t.path(), fs::file_size(t.path()) - 50);
  IntakeLog torn(t.path());
  EXPECT_EQ(torn.recover(0).size(), 3u);
  EXPECT_EQ(fs::file_size(t.path()), complete);
}

// Acknowledged requests in several appends, of varied sizes, and where each record lies.
struct Written {
  std::vector<std::string> bodies;
  std::vector<std::pair<size_t, size_t>> extent;  // [begin, end) of each record
};

Written writeRecords(const std::string& path) {
  Written w;
  IntakeLog log(path);
  log.recover(0);
  size_t offset = 0;
  for (int batch = 0; batch < 6; ++batch) {
    std::vector<IntakeBody> bodies;
    std::vector<std::string> texts;
    for (int i = 0; i < 4; ++i) {
      const int n = batch * 4 + i;
      texts.push_back("body " + std::to_string(n) + " " +
                      std::string(static_cast<size_t>(n * 37 % 300), 'a' + n % 26));
    }
    for (const auto& b : texts) bodies.push_back({1, b});
    log.append(bodies);
    for (const auto& b : texts) {
      w.bodies.push_back(b);
      w.extent.emplace_back(offset, offset + 28 + b.size());  // header (intake_log.h) + body
      offset += 28 + b.size();
    }
  }
  EXPECT_EQ(offset, fs::file_size(path));
  return w;
}

// Recovers `path` after damage to bytes [from, to) and checks that every record the damage did
// not touch comes back, once, in order, and nothing else does.
void expectUndamagedReplayOnce(const std::string& path, const Written& w, size_t from, size_t to,
                               const std::string& what) {
  IntakeLog log(path);
  std::vector<IntakeRecord> got = log.recover(0);
  std::vector<std::string> expected;
  for (size_t i = 0; i < w.bodies.size(); ++i) {
    const bool touched = w.extent[i].first < to && from < w.extent[i].second;
    if (!touched) expected.push_back(w.bodies[i]);
  }
  EXPECT_EQ(bodiesOf(got), expected) << what;
  for (size_t i = 1; i < got.size(); ++i) EXPECT_LT(got[i - 1].id, got[i].id) << what;
  if (expected.size() < w.bodies.size() && to < fs::file_size(path)) {
    EXPECT_GE(log.damage().records, 1u) << what << ": damage is reported";
  }
}

TEST(IntakeLog, EveryUndamagedRecordReplaysOnceAfterFlipsTruncationAndZeroedBlocks) {
  TempLog t;
  const Written w = writeRecords(t.path());
  const std::string pristine = [&] {
    std::ifstream f(t.path(), std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), {});
  }();
  auto restore = [&](const std::string& bytes) {
    std::ofstream(t.path(), std::ios::binary | std::ios::trunc) << bytes;
  };
  // A flipped byte: in a record's magic, length, id, header CRC, body; first, middle, last.
  const size_t mid = w.extent.size() / 2;
  std::vector<size_t> flips = {0, 2, 5, 10, 19, 26, 30};
  for (size_t k : {mid, w.extent.size() - 1}) {
    for (size_t d : {size_t{0}, size_t{4}, size_t{9}, size_t{25}, size_t{29}}) {
      flips.push_back(w.extent[k].first + d);
    }
  }
  flips.push_back(pristine.size() / 2);
  flips.push_back(pristine.size() - 1);
  for (size_t at : flips) {
    std::string bytes = pristine;
    bytes[at] = static_cast<char>(bytes[at] ^ 0x20);
    restore(bytes);
    expectUndamagedReplayOnce(t.path(), w, at, at + 1, "flipped byte " + std::to_string(at));
  }
  // Several flips at once, in different records.
  {
    std::string bytes = pristine;
    for (size_t k : {size_t{1}, mid, w.extent.size() - 2}) bytes[w.extent[k].first + 30] ^= 1;
    restore(bytes);
    IntakeLog log(t.path());
    EXPECT_EQ(log.recover(0).size(), w.bodies.size() - 3);
    EXPECT_EQ(log.damage().records, 3u);
  }
  // A zeroed block (a lost disk sector) spanning the end of one record and the start of another.
  for (size_t at : {w.extent[3].second - 10, w.extent[mid].first + 5}) {
    std::string bytes = pristine;
    std::fill(bytes.begin() + static_cast<ptrdiff_t>(at),
              bytes.begin() + static_cast<ptrdiff_t>(at + 64), '\0');
    restore(bytes);
    expectUndamagedReplayOnce(t.path(), w, at, at + 64, "zeroed block at " + std::to_string(at));
  }
  // Truncated anywhere: every complete record before the cut.
  for (size_t at : {size_t{0}, size_t{13}, w.extent[mid].first + 20, pristine.size() - 1}) {
    restore(pristine.substr(0, at));
    expectUndamagedReplayOnce(t.path(), w, at, SIZE_MAX, "truncated at " + std::to_string(at));
  }
}

// The record format of handlers before format 2 (u32 payload length, u32 CRC of the payload,
// payload = i64 id, i32 format, body) is still read, and appends after it use the new format.
TEST(IntakeLog, RecordsOfTheOldFormatAreReplayed) {
  TempLog t;
  {
    std::string file;
    for (int64_t id : {1, 2, 3}) {
      std::string payload(12, '\0');
      const int32_t format = 2;
      std::memcpy(payload.data(), &id, 8);
      std::memcpy(payload.data() + 8, &format, 4);
      payload += "old " + std::to_string(id);
      const auto len = static_cast<uint32_t>(payload.size());
      const uint32_t crc = crc32(payload);
      file.append(reinterpret_cast<const char*>(&len), 4);
      file.append(reinterpret_cast<const char*>(&crc), 4);
      file += payload;
    }
    std::ofstream(t.path(), std::ios::binary) << file;
  }
  {
    IntakeLog log(t.path());
    std::vector<IntakeRecord> rs = log.recover(1);
    EXPECT_EQ(bodiesOf(rs), (std::vector<std::string>{"old 2", "old 3"}));
    EXPECT_EQ(rs[0].format, 2);
    EXPECT_EQ(log.append({{1, "new 4"}}), 4);
  }
  IntakeLog log(t.path());
  EXPECT_EQ(bodiesOf(log.recover(0)),
            (std::vector<std::string>{"old 1", "old 2", "old 3", "new 4"}));
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
