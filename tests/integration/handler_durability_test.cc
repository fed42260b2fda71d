// Acknowledged means durable (DESIGN §5): a client streams batches, the handler is killed with
// SIGKILL mid-stream, restarted on the same store, and every batch that got a 2xx is there, once.
// Both commit paths: write-behind (the default: acknowledged requests replayed from the intake
// log at restart) and write-through (--checkpoint-ms 0).
#include <gtest/gtest.h>

#include <atomic>
#include <optional>
#include <thread>

#include "tests/integration/handler_process.h"
#include "tests/integration/handler_test_util.h"

namespace perfhat::testing {
namespace {

class HandlerDurability : public ::testing::TestWithParam<const char*> {};

TEST_P(HandlerDurability, EveryAcknowledgedBatchSurvivesKill9) {
  TempDir dir(std::string("durability-") + GetParam());
  const std::string store = dir / "d.sqlite";
  std::vector<int> acked;  // batch ids that got 200
  {
    HandlerProcess h(
        {"--mode", "deployed", "--store", store, "--token", "t", "--checkpoint-ms", GetParam()});
    std::atomic<int> sent{0};
    std::thread client_thread([&] {
      auto c = client(h.url(), "t");
      c.set_read_timeout(std::chrono::seconds(5));
      for (int i = 0; i < 5000; ++i) {  // bounded; the kill ends it much earlier
        // One key per batch, 20 spans each: presence and exact count are checkable.
        auto lat = lognormalLatencies(20, static_cast<uint64_t>(i));
        auto res = c.Post("/v1/traces",
                          otlp::encodeProtobuf(spansFor("batch" + std::to_string(i), lat, i)),
                          "application/x-protobuf");
        sent = i + 1;
        if (!res) break;  // handler is gone
        if (res->status == 200) acked.push_back(i);
      }
    });
    // Kill once a good number of batches went through (bounded wait).
    for (int spin = 0; spin < 3000 && sent.load() < 40; ++spin) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    h.kill9();
    client_thread.join();
  }
  ASSERT_GE(acked.size(), 10u) << "too few batches before the kill to be meaningful";

  HandlerProcess again({"--mode", "deployed", "--store", store, "--token", "t"});
  auto c = client(again.url(), "t");
  std::vector<std::string> keys;
  keys.reserve(acked.size());
  for (int i : acked) keys.push_back("batch" + std::to_string(i));
  BatchGetResponse r = batchGet(c, keys);
  EXPECT_TRUE(r.missing.empty()) << r.missing.size() << " acknowledged batches lost, first "
                                 << (r.missing.empty() ? "" : r.missing[0]);
  EXPECT_EQ(r.items.size(), acked.size());
  for (const auto& item : r.items) EXPECT_EQ(item.stats->count, 20u) << item.key;
}

// "1000": write-behind with the default interval (most acknowledged batches are still only in
// the intake log at the kill); "0": write-through.
INSTANTIATE_TEST_SUITE_P(CommitPaths, HandlerDurability, ::testing::Values("1000", "0"),
                         [](const auto& info) {
                           return std::string(info.param) == "0" ? "WriteThrough" : "WriteBehind";
                         });

// Storage failing at run time (here: the file size limit, as a full disk) answers 503 with a JSON
// error; the handler stays up and keeps serving reads of what it has (saying that newer
// acknowledged data is not readable yet), and once the disk has room again (a restart without
// the limit), every acknowledged batch is there.
TEST(HandlerDurabilityLimits, StorageFailureAnswers503AndTheHandlerKeepsServing) {
  TempDir dir("storage-full");
  const std::string store = dir / "full.sqlite";
  std::optional<HandlerProcess> h;
  h.emplace(std::vector<std::string>{"--mode", "deployed", "--store", store, "--token", "t"},
            std::chrono::seconds(30), /*file_size_limit=*/256 * 1024);
  auto c = client(h->url(), "t");
  int ok = 0;
  int last_status = 0;
  std::string last_body;
  for (int i = 0; i < 400; ++i) {  // bounded: each batch adds ~20 kB of new keys
    otlp::ExportRequest r = spansFor("k" + std::to_string(i), lognormalLatencies(50, i), i);
    for (size_t s = 0; s < r.spans.size(); ++s) {
      r.spans[s].attributes[0].second = "fill::fn" + std::to_string(i) + "_" + std::to_string(s);
    }
    auto res = c.Post("/v1/traces", otlp::encodeProtobuf(r), "application/x-protobuf");
    ASSERT_TRUE(res) << "handler died";
    last_status = res->status;
    last_body = res->body;
    if (last_status != 200) break;
    ++ok;
    // The first batch is read back at once (a read flushes acknowledged data to the aggregates).
    if (i == 0) {
      ASSERT_EQ(batchGet(c, {"fill::fn0_0"}).items.size(), 1u);
    }
  }
  ASSERT_EQ(last_status, 503) << last_body;
  EXPECT_NE(last_body.find("\"unavailable\""), std::string::npos) << last_body;
  EXPECT_GE(ok, 1);
  // Still up: health answers and earlier data is readable.
  auto health = c.Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200) << health->body;
  auto read = c.Post("/v1/feedback:batchGet", R"({"keys":["fill::fn0_0"]})", "application/json");
  ASSERT_TRUE(read);
  ASSERT_EQ(read->status, 200) << read->body;
  EXPECT_EQ(parseBatchGetResponse(read->body).items.size(), 1u);
  EXPECT_TRUE(read->has_header("X-Perfhat-Unflushed")) << "stale answer not marked as such";

  h.reset();  // SIGTERM: its last checkpoint fails too; the intake log keeps the rest
  HandlerProcess again({"--mode", "deployed", "--store", store, "--token", "t"});
  auto c2 = client(again.url(), "t");
  std::vector<std::string> keys;
  keys.reserve(static_cast<size_t>(ok));
  for (int i = 0; i < ok; ++i) keys.push_back("fill::fn" + std::to_string(i) + "_0");
  BatchGetResponse all = batchGet(c2, keys);
  EXPECT_EQ(all.items.size(), static_cast<size_t>(ok))
      << all.missing.size() << " acknowledged batches missing, first "
      << (all.missing.empty() ? "" : all.missing[0]);
}

}  // namespace
}  // namespace perfhat::testing
