// Reliability suite, durability (issue #19): faults injected while exporters stream, then every
// batch the handler acknowledged must be there exactly once.
//   * SIGKILL of the handler mid-stream, several rounds on one store: SQLite (write-behind and
//     write-through) and PostgreSQL;
//   * PostgreSQL stopped and restarted under load: batches refused during the outage get 503
//     (never a false 2xx), ingest resumes by itself afterwards;
//   * a corrupted record in SQLite's intake log after a SIGKILL: the handler still starts and
//     replays every intact record, and nothing comes back with a wrong count.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <random>

#include "feedback-handler/ingest/intake_log.h"
#include "tests/integration/handler_process.h"
#include "tests/reliability/exporters.h"
#include "tests/support/postgres_gtest.h"

namespace perfhat::reliability {
namespace {

using testing::HandlerProcess;
using testing::TempDir;

constexpr const char* kToken = "t";

// Rounds of "start, stream with `exporters` threads for a random while, SIGKILL" on one store,
// then a final start that must serve every acknowledged batch of every round exactly once.
void killRounds(const std::string& store_name, const std::vector<std::string>& store_args,
                int rounds, int exporters) {
  std::mt19937 rng(42);
  std::vector<std::string> acked;
  size_t sent = 0, no_response = 0;
  long peak_kb = 0;
  std::map<int, size_t> refused;
  for (int round = 0; round < rounds; ++round) {
    std::vector<std::string> args = store_args;
    args.insert(args.end(), {"--token", kToken});
    HandlerProcess h(args);
    ExporterStream stream(h.url(), kToken, "r" + std::to_string(round), exporters);
    // Kill once some batches went through, after a random further while (bounded).
    for (int spin = 0; spin < 3000 && stream.sent() < 30; ++spin) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    std::this_thread::sleep_for(
        std::chrono::milliseconds(std::uniform_int_distribution(0, 700)(rng)));
    peak_kb = std::max(peak_kb, processMemory(h.pid()).peak_kb);
    h.kill9();
    stream.stop();
    StreamTally t = stream.tally();
    acked.insert(acked.end(), t.acked.begin(), t.acked.end());
    sent += stream.sent();
    no_response += t.no_response;
    for (auto [status, n] : t.refused) refused[status] += n;
  }
  ASSERT_GE(acked.size(), static_cast<size_t>(10 * rounds)) << "too few batches to be meaningful";
  std::vector<std::string> args = store_args;
  args.insert(args.end(), {"--token", kToken});
  HandlerProcess again(args);
  Verification v = verifyAcked(again.url(), kToken, acked);
  json refused_json = json::object();
  for (auto [status, n] : refused) refused_json[std::to_string(status)] = n;
  record({{"kind", "durability"},
          {"store", store_name},
          {"fault", "SIGKILL of the handler during ingest"},
          {"faults", rounds},
          {"batches_sent", sent},
          {"batches_acked", acked.size()},
          {"refused", refused_json},
          {"no_response", no_response},
          {"lost", v.missing + v.wrong_count},
          {"peak_rss_kb", peak_kb}});
  EXPECT_EQ(v.missing, 0u) << v.first_problem;
  EXPECT_EQ(v.wrong_count, 0u) << v.first_problem;
  EXPECT_TRUE(refused.empty()) << "a healthy handler refused batches before the kill";
}

TEST(Durability, SqliteWriteBehindSurvivesRepeatedKill9) {
  TempDir dir("rel-kill-wb");
  killRounds("SQLite, write-behind (default)", {"--mode", "deployed", "--store", dir / "s.sqlite"},
             faultRounds(3, 20), 4);
}

TEST(Durability, SqliteWriteThroughSurvivesRepeatedKill9) {
  TempDir dir("rel-kill-wt");
  killRounds("SQLite, write-through (--checkpoint-ms 0)",
             {"--mode", "deployed", "--store", dir / "s.sqlite", "--checkpoint-ms", "0"},
             faultRounds(3, 20), 4);
}

TEST(Durability, PostgresSurvivesRepeatedKill9) {
  testing::PostgresServer* pg = nullptr;
  PERFHAT_REQUIRE_POSTGRES(pg);
  const std::string url = pg->createDatabase("rel_kill");
  killRounds("PostgreSQL", {"--mode", "deployed", "--store", url}, faultRounds(3, 15), 4);
}

// PostgreSQL stops (fast shutdown: sessions are cut) and comes back while exporters stream: the
// handler answers 503 meanwhile, reconnects by itself, and keeps every batch it acknowledged.
TEST(Durability, PostgresRestartUnderLoadLosesNothingAndNeverFalselyAcknowledges) {
  if (auto why = testing::postgresSkipReason()) GTEST_SKIP() << *why;
  testing::PostgresServer pg;  // its own server: this test stops it
  const std::string url = pg.createDatabase("rel_restart");
  HandlerProcess h({"--mode", "deployed", "--store", url, "--token", kToken});
  ExporterStream stream(h.url(), kToken, "pg", 4, std::chrono::milliseconds(5));
  const int restarts = faultRounds(2, std::max(3, static_cast<int>(loadSeconds(0) / 10)));
  size_t refused_during_outages = 0;
  for (int i = 0; i < restarts; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    auto before = stream.tally();
    pg.stop();
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    auto during = stream.tally();
    for (auto [status, n] : during.refused) refused_during_outages += n;
    for (auto [status, n] : before.refused) refused_during_outages -= n;
    pg.start();
  }
  stream.mark();
  // Ingest resumes (bounded wait): the next request reconnects.
  for (int spin = 0; spin < 1000 && stream.tally().acked_after_mark < 20; ++spin) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  stream.stop();
  StreamTally t = stream.tally();
  Memory mem = processMemory(h.pid());
  Verification v = verifyAcked(h.url(), kToken, t.acked);
  auto health = testing::client(h.url()).Get("/healthz");
  size_t other_refusals = 0;
  json refused_json = json::object();
  for (auto [status, n] : t.refused) {
    refused_json[std::to_string(status)] = n;
    if (status != 503) other_refusals += n;
  }
  record({{"kind", "durability"},
          {"store", "PostgreSQL"},
          {"fault", "PostgreSQL stopped for 1.5 s and restarted under load"},
          {"faults", restarts},
          {"batches_sent", stream.sent()},
          {"batches_acked", t.acked.size()},
          {"refused", refused_json},
          {"no_response", t.no_response},
          {"lost", v.missing + v.wrong_count},
          {"peak_rss_kb", mem.peak_kb}});
  EXPECT_EQ(v.missing, 0u) << v.first_problem;
  EXPECT_EQ(v.wrong_count, 0u) << v.first_problem;
  EXPECT_GT(refused_during_outages, 0u) << "no batch was refused while PostgreSQL was down";
  EXPECT_EQ(other_refusals, 0u) << "refusals other than 503: " << refused_json.dump();
  EXPECT_EQ(t.no_response, 0u) << "the handler dropped connections instead of answering 503";
  EXPECT_GE(t.acked_after_mark, 20u) << "ingest did not resume after PostgreSQL came back";
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200) << health->body;
}

// A record in the middle of the intake log is corrupted on disk after a SIGKILL (a byte flipped
// in its body; its length is intact). The handler must still start and serve, must not replay the
// corrupted record, and must replay every intact record, before and after it: one bad record
// costs only itself, not the acknowledged batches logged behind it.
TEST(Durability, SqliteCorruptIntakeRecordCostsOnlyItself) {
  TempDir dir("rel-intake");
  const std::string store = dir / "s.sqlite";
  std::vector<std::string> keys;
  {
    // A checkpoint interval longer than the test: every batch stays in the intake log.
    HandlerProcess h(
        {"--mode", "deployed", "--store", store, "--token", kToken, "--checkpoint-ms", "600000"});
    auto c = testing::client(h.url(), kToken);
    for (int i = 0; i < 30; ++i) {
      keys.push_back(batchKey("intake", 0, i));
      auto res = c.Post("/v1/traces", batchBody(keys.back(), static_cast<uint64_t>(i)),
                        "application/x-protobuf");
      ASSERT_TRUE(res && res->status == 200) << (res ? res->body : "no response");
    }
    h.kill9();
  }
  // Record layout (intake_log.cc, format 2): a 28-byte header (magic "PHr2", u32 body length,
  // i64 id, i32 format, u32 body CRC, u32 header CRC), then the body. Flip one byte in the body
  // of record 15.
  const std::string log = handler::IntakeLog::pathFor(store);
  std::string bytes;
  {
    std::ifstream in(log, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  constexpr size_t kHeader = 28;
  size_t off = 0;
  for (int r = 0; r < 15; ++r) {
    ASSERT_LE(off + kHeader, bytes.size()) << "intake log shorter than expected";
    ASSERT_EQ(bytes.compare(off, 4, "PHr2"), 0) << "no record at " << off;
    uint32_t len = 0;
    std::memcpy(&len, bytes.data() + off + 4, 4);
    off += kHeader + len;
  }
  ASSERT_LE(off + kHeader + 40, bytes.size()) << "intake log shorter than expected";
  bytes[off + kHeader + 30] ^= 0x5a;
  std::ofstream(log, std::ios::binary | std::ios::trunc) << bytes;

  HandlerProcess again({"--mode", "deployed", "--store", store, "--token", kToken});
  auto health = testing::client(again.url()).Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200) << health->body;
  Verification before = verifyAcked(again.url(), kToken, {keys.begin(), keys.begin() + 15});
  Verification after = verifyAcked(again.url(), kToken, {keys.begin() + 16, keys.end()});
  Verification corrupt = verifyAcked(again.url(), kToken, {keys[15]});
  record({{"kind", "intake_corruption"},
          {"fault", "one byte flipped in an intake-log record after SIGKILL"},
          {"records", keys.size()},
          {"recovered_before", 15 - before.missing},
          {"recovered_after", after.checked - after.missing},
          {"wrong_count", before.wrong_count + after.wrong_count + corrupt.wrong_count}});
  EXPECT_EQ(before.missing, 0u) << before.first_problem;
  EXPECT_EQ(after.missing, 0u) << "intact records after the corrupted one were not replayed: "
                               << after.first_problem;
  EXPECT_EQ(before.wrong_count + after.wrong_count + corrupt.wrong_count, 0u)
      << before.first_problem << after.first_problem << corrupt.first_problem;
}

}  // namespace
}  // namespace perfhat::reliability
