// The streaming batchGet writer must produce the DESIGN §4 document that common/feedback.cc's
// nlohmann-based serialize() produces: same fields, same optional-field rules, same values.
#include "feedback-handler/http/feedback_writer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

namespace perfhat::handler {
namespace {

using nlohmann::json;

FeedbackItem richItem() {
  FeedbackItem it;
  it.key = "ns::Cart::total(std::vector<int> const&) \"quoted\" \\ tab\t nl\n ctl\x01 é";
  it.mangled = "_ZN2ns4Cart5totalERKSt6vectorIiSaIiEE";
  it.stats = Stats{12345,
                   3,
                   1.5e6,
                   1e3,
                   9.87654321e8,
                   1.25e6,
                   2e6,
                   3.1e6,
                   7.77e7,
                   0.123456789,
                   {"2026-11-21T00:00:00Z", "2026-11-22T00:00:00Z"}};
  it.baseline = Stats{1, 0, 0, 0, 0, 0, 0, 0, 0, 1e-7, {"2026-11-20T00:00:00Z", ""}};
  it.callsites.push_back({"main()", 10, 5e5, 4e5, 9e5, 1e6, 0.5, 17.25, 2.5});
  it.callsites.push_back({"other()", 1, 1, 1, 1, 1, 1e300, std::nullopt, 0});
  it.loops.push_back({0, 42, 8.125, 20, 7});
  it.loops.push_back({3, 0, 0, 0, 0});
  it.result_size = SizeStats{12.5, 30, 99, 4};
  it.versions = {"1.0", "1.1"};
  it.services = {"svc"};
  it.hosts = {"h1", "h2"};
  it.file = "/src/cart.cc";
  it.line = 17;
  it.last_seen = "2026-11-21T12:00:00Z";
  it.dropped_calls = 2048.5;
  return it;
}

TEST(FeedbackWriter, SameDocumentAsTheNlohmannSerializer) {
  BatchGetResponse r;
  r.items.push_back(richItem());
  FeedbackItem bare;  // only the mandatory fields
  bare.key = "f()";
  r.items.push_back(bare);
  r.missing = {"nope()", "we\"ird"};
  r.cursor = "42";
  const std::string fast = writeBatchGetResponse(r);
  EXPECT_EQ(json::parse(fast), json::parse(serialize(r))) << fast;
  // And it round-trips through the client parser to the same values.
  EXPECT_EQ(parseBatchGetResponse(fast), r);

  r.cursor.clear();  // optional: absent when empty
  r.items.clear();
  EXPECT_EQ(json::parse(writeBatchGetResponse(r)), json::parse(serialize(r)));
  EXPECT_EQ(writeBatchGetResponse(r), "{\"items\":[],\"missing\":[\"nope()\",\"we\\\"ird\"]}");
}

TEST(FeedbackWriter, SingleItemMatchesToJson) {
  const FeedbackItem it = richItem();
  EXPECT_EQ(json::parse(writeFeedbackItem(it)), json(it));
}

TEST(FeedbackWriter, NonFiniteNumbersAreNullAndBadUtf8IsRepaired) {
  FeedbackItem it;
  it.key = std::string("bad\xff\xfe utf8");
  it.stats = Stats{};
  it.stats->mean_ns = std::numeric_limits<double>::quiet_NaN();
  it.stats->max_ns = std::numeric_limits<double>::infinity();
  const json j = json::parse(writeFeedbackItem(it));  // must be valid JSON (throws otherwise)
  EXPECT_TRUE(j["stats"]["mean_ns"].is_null());
  EXPECT_TRUE(j["stats"]["max_ns"].is_null());
  EXPECT_EQ(j["key"], "bad?? utf8");
}

TEST(FeedbackWriter, LongDocumentsGrowTheBufferAndStayEqual) {
  // Items far larger than the writer's size guess, escapes at both ends of strings, many items.
  BatchGetResponse r;
  for (int i = 0; i < 300; ++i) {
    FeedbackItem it = i % 3 == 0 ? richItem() : FeedbackItem{};
    it.key = "\"" + std::string(static_cast<size_t>(i * 7), 'k') + std::to_string(i) + "\n";
    if (i % 5 == 0) it.file = std::string(2000, 'f');
    if (i % 7 == 0) it.versions.assign(50, "v\\");
    r.items.push_back(std::move(it));
  }
  r.missing.assign(20, std::string(100, 'm'));
  const std::string fast = writeBatchGetResponse(r);
  EXPECT_EQ(json::parse(fast), json::parse(serialize(r)));
  EXPECT_EQ(parseBatchGetResponse(fast), r);
  EXPECT_EQ(json::parse(writeFeedbackItem(r.items[5])), json(r.items[5]));
}

// A large response is written in chunks on parallel threads and joined: the same bytes as one
// thread writes, for every split (chunks end on items of every shape), and the same document
// as the nlohmann serializer.
TEST(FeedbackWriter, ChunkedParallelWritingGivesTheSameBytes) {
  BatchGetResponse r;
  r.cursor = "7";
  for (int i = 0; i < 5000; ++i) {
    FeedbackItem it = i % 4 == 0 ? richItem() : FeedbackItem{};
    it.key = "k" + std::to_string(i) + (i % 9 == 0 ? "\t\"" : "");
    if (i % 6 == 0) it.versions = {"v" + std::to_string(i % 3)};
    r.items.push_back(std::move(it));
  }
  r.missing = {"gone()"};
  const std::string one = writeBatchGetResponse(r, 1);
  EXPECT_EQ(json::parse(one), json::parse(serialize(r)));
  for (int threads : {2, 3, 4}) {
    const std::string chunked = writeBatchGetResponse(r, threads);
    EXPECT_TRUE(chunked == one) << threads << " threads: " << chunked.size() << " vs " << one.size()
                                << " bytes";
  }
  // On a server's team, consuming the response: the same bytes, and every item released.
  for (size_t threads : {1u, 2u, 3u}) {
    ChunkTeam team(threads);
    BatchGetResponse given = r;
    std::string joined;
    for (const std::string& piece : writeBatchGetResponsePieces(std::move(given), team)) {
      joined += piece;
    }
    EXPECT_TRUE(joined == one) << threads << " threads";
    // NOLINTNEXTLINE(bugprone-use-after-move): what the writer left of the response it was given
    for (const FeedbackItem& it : given.items) ASSERT_EQ(it, FeedbackItem{});
  }
}

// Whole numbers are written in integer form (durations are whole nanoseconds), with ".0" like
// every double; fractions keep their shortest round-trip form.
TEST(FeedbackWriter, WholeNumbersAreWrittenAsIntegers) {
  FeedbackItem it;
  it.key = "k";
  it.stats = Stats{};
  it.stats->p50_ns = 2034871;
  it.stats->p90_ns = 1e6;
  it.stats->p99_ns = 123.25;
  it.stats->max_ns = 1e300;
  it.stats->rate_per_s = -3;
  const std::string text = writeFeedbackItem(it);
  EXPECT_NE(text.find("\"p50_ns\":2034871.0"), std::string::npos) << text;
  EXPECT_NE(text.find("\"p90_ns\":1000000.0"), std::string::npos) << text;
  EXPECT_NE(text.find("\"p99_ns\":123.25"), std::string::npos) << text;
  EXPECT_NE(text.find("\"rate_per_s\":-3.0"), std::string::npos) << text;
  EXPECT_EQ(json::parse(text), json(it));
}

}  // namespace
}  // namespace perfhat::handler
