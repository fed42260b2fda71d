#include "common/feedback.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace perfhat {
namespace {

TEST(FeedbackJson, ParsesTheDesignExample) {
  const char* text =
      R"J({"items":[{"key":"agile::BacklogService::storyPoints(const agile::Story &) const",
    "stats":{"count":1200,"errors":3,"mean_ns":3.1e6,"min_ns":9.0e5,"max_ns":4.1e7,
             "p50_ns":2.8e6,"p90_ns":6.0e6,"p95_ns":8.2e6,"p99_ns":1.2e7,
             "window":{"from":"2026-11-21T00:00:00Z","to":"2026-11-22T00:00:00Z"}},
    "callsites":[{"caller":"agile::X::y()","count":800,"mean_ns":2.9e6,"p50_ns":2.7e6,"caller_rate_per_s":4.2}],
    "loops":[{"ordinal":0,"line":42,"iterations_mean":17.5}],
    "result_size":{"mean":17.5,"p90":40},
    "versions":["1.4.2"]}],
    "missing":["nope()"]})J";
  BatchGetResponse r = parseBatchGetResponse(text);
  ASSERT_EQ(r.items.size(), 1u);
  const FeedbackItem& it = r.items[0];
  EXPECT_EQ(it.key, "agile::BacklogService::storyPoints(const agile::Story &) const");
  ASSERT_TRUE(it.stats.has_value());
  EXPECT_EQ(it.stats->count, 1200u);
  EXPECT_DOUBLE_EQ(it.stats->p99_ns, 1.2e7);
  EXPECT_EQ(it.stats->window.to, "2026-11-22T00:00:00Z");
  ASSERT_EQ(it.callsites.size(), 1u);
  EXPECT_DOUBLE_EQ(it.callsites[0].caller_rate_per_s, 4.2);
  EXPECT_FALSE(it.callsites[0].caller_input_size.has_value());
  ASSERT_EQ(it.loops.size(), 1u);
  EXPECT_EQ(it.loops[0].line, 42);
  ASSERT_TRUE(it.result_size.has_value());
  EXPECT_DOUBLE_EQ(it.result_size->p90, 40);
  EXPECT_EQ(r.missing, std::vector<std::string>{"nope()"});
}

TEST(FeedbackJson, RoundTrips) {
  BatchGetResponse r;
  FeedbackItem it;
  it.key = "f(int)J";
  it.mangled = "_Z1fi";
  it.stats = Stats{.count = 5, .mean_ns = 10, .p50_ns = 9, .window = {"a", "b"}};
  it.callsites.push_back({.caller = "g()", .count = 5, .caller_input_size = 3.0});
  it.hosts = {"h1"};
  r.items.push_back(it);
  r.cursor = "42";
  EXPECT_EQ(parseBatchGetResponse(serialize(r)), r);

  BatchGetRequest q{.keys = {"a", "b"}, .range = TimeWindow{"x", "y"}};
  EXPECT_EQ(parseBatchGetRequest(serialize(q)), q);
}

// The quick reader of plain key lists takes exactly what it can read as the full parser would,
// and declines everything else (which the full parser then reads or refuses).
TEST(FeedbackJson, PlainKeyListsReadTheSameAsWithTheFullParser) {
  auto full = [](std::string_view text) {
    return nlohmann::json::parse(text).get<BatchGetRequest>().keys;
  };
  const char* plain[] = {R"J({"keys":[]})J", R"J({"keys":["a::f(int)","b()"]})J",
                         " {\n\t\"keys\" : [ \"x\" ,\"y z\" ] }\r\n", R"J({"keys":[""]})J"};
  for (const char* text : plain) {
    std::vector<std::string> keys = {"untouched"};
    ASSERT_TRUE(parsePlainKeysRequest(text, keys)) << text;
    EXPECT_EQ(keys, full(text)) << text;
    EXPECT_EQ(parseBatchGetRequest(text).keys, keys) << text;
  }
  const char* other[] = {R"J({"keys":["a\"b"]})J",
                         R"J({"keys":["\u0041"]})J",
                         "{\"keys\":[\"caf\xc3\xa9\"]}",
                         R"J({"keys":["a"],"range":{"from":"x"}})J",
                         R"J({"range":null,"keys":["a"]})J",
                         R"J({"keys":["a",]})J",
                         R"J({"keys":["a"]} x)J",
                         R"J({"keys":["a")J",
                         R"J({"keys":[1]})J",
                         R"J({"keys":"a"})J",
                         "{\"keys\":[\"a\tb\"]}",
                         R"J([{"keys":["a"]}])J",
                         ""};
  for (const char* text : other) {
    std::vector<std::string> keys = {"untouched"};
    EXPECT_FALSE(parsePlainKeysRequest(text, keys)) << text;
    EXPECT_EQ(keys, std::vector<std::string>{"untouched"}) << text;
  }
  // Declined texts still parse, or fail, as before.
  EXPECT_EQ(parseBatchGetRequest(R"J({"keys":["a\"b"]})J").keys, std::vector<std::string>{"a\"b"});
  EXPECT_EQ(parseBatchGetRequest(R"J({"keys":["a"],"range":{"from":"x"}})J").range->from, "x");
  EXPECT_THROW(parseBatchGetRequest(R"J({"keys":["a",]})J"), FeedbackFormatError);
  EXPECT_THROW(parseBatchGetRequest(R"J({"keys":[1]})J"), FeedbackFormatError);
}

TEST(FeedbackJson, AcceptsABareArrayOfItems) {
  BatchGetResponse r = parseBatchGetResponse(R"J([{"key":"f()"},{"key":"g()"}])J");
  EXPECT_EQ(r.items.size(), 2u);
}

TEST(FeedbackJson, RejectsMalformedInputWithAClearMessage) {
  auto message = [](const char* text) {
    try {
      parseBatchGetResponse(text);
    } catch (const FeedbackFormatError& e) {
      return std::string(e.what());
    }
    return std::string("<no error>");
  };
  EXPECT_NE(message("{").find("not valid JSON"), std::string::npos);
  EXPECT_NE(message(R"J({"items":3})J").find("items"), std::string::npos);
  EXPECT_NE(message(R"J({"items":[{"stats":{}}]})J").find("key"), std::string::npos);
  EXPECT_NE(message(R"J({"items":[{"key":"f()","stats":{"count":"many"}}]})J"), "<no error>");
  EXPECT_NE(message(R"J({"items":[{"key":"f()","stats":[]}]})J").find("stats"), std::string::npos);
  EXPECT_EQ(message(R"J({"items":[]})J"), "<no error>");
  // Counts out of range are rejected, not cast (a float-to-integer cast of 1e99 is undefined).
  EXPECT_NE(message(R"J({"items":[{"key":"f()","stats":{"count":1e99}}]})J").find("count"),
            std::string::npos);
  EXPECT_NE(message(R"J({"items":[{"key":"f()","stats":{"count":-1}}]})J"), "<no error>");
}

// Nesting 200,000 deep in any field is a clear error, not a stack overflow (from_json copies
// values, recursing once per level).
TEST(FeedbackJson, DeeplyNestedDocumentsAreAClearError) {
  const std::string deep = std::string(200000, '[') + std::string(200000, ']');
  const std::string in_window = R"J({"items":[{"key":"f()","stats":{"window":)J" + deep + "}}]}";
  const std::string in_callsites = R"J({"items":[{"key":"f()","callsites":)J" + deep + "}]}";
  for (const std::string& text : {deep, in_window, in_callsites}) {
    try {
      parseBatchGetResponse(text);
      ADD_FAILURE() << "accepted";
    } catch (const FeedbackFormatError& e) {
      EXPECT_NE(std::string(e.what()).find("nested deeper than"), std::string::npos) << e.what();
    }
  }
  const std::string in_range = R"J({"keys":["a"],"range":)J" + deep + "}";
  for (const std::string& text : {deep, in_range}) {
    try {
      parseBatchGetRequest(text);
      ADD_FAILURE() << "accepted";
    } catch (const FeedbackFormatError& e) {
      EXPECT_NE(std::string(e.what()).find("nested deeper than"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace perfhat
