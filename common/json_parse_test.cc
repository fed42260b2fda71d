#include "common/json_parse.h"

#include <gtest/gtest.h>

#include <string>

namespace perfhat {
namespace {

std::string nested(int depth, char open, char close) {
  return std::string(static_cast<size_t>(depth), open) +
         std::string(static_cast<size_t>(depth), close);
}

TEST(JsonParse, ParsesOrdinaryDocuments) {
  JsonParse p = parseJson(R"({"a":[1,{"b":"c"}],"d":null})");
  ASSERT_TRUE(p.ok()) << p.error;
  EXPECT_EQ(p.value["a"][1]["b"], "c");
  EXPECT_TRUE(parseJson("42").ok());
}

TEST(JsonParse, MalformedTextIsAnErrorNotAnException) {
  JsonParse p = parseJson("{\"a\":");
  EXPECT_FALSE(p.ok());
  EXPECT_TRUE(p.value.is_discarded());
  EXPECT_NE(p.error.find("not valid JSON"), std::string::npos) << p.error;
}

// A number beyond a double's range makes nlohmann throw out_of_range, not parse_error, from the
// same parse (found by fuzzing the aggregate rows: it terminated the process).
TEST(JsonParse, NumbersBeyondADoubleAreAnErrorNotAnException) {
  for (const char* text : {"1e400", "[2e+308]", R"({"sum":-1e999})"}) {
    JsonParse p;
    ASSERT_NO_THROW(p = parseJson(text)) << text;
    EXPECT_FALSE(p.ok()) << text;
    EXPECT_NE(p.error.find("not valid JSON"), std::string::npos) << p.error;
  }
}

TEST(JsonParse, DepthUpToTheLimitIsAccepted) {
  JsonParse p = parseJson(nested(8, '[', ']'), 8);
  EXPECT_TRUE(p.ok()) << p.error;
}

TEST(JsonParse, DeeperThanTheLimitIsRefused) {
  JsonParse p = parseJson(nested(9, '[', ']'), 8);
  EXPECT_FALSE(p.ok());
  EXPECT_TRUE(p.value.is_discarded());
  EXPECT_EQ(p.error, "nested deeper than 8 levels");
}

// 200,000 levels (400 KB) used to parse and then overflow the stack when the value was copied.
TEST(JsonParse, HugeNestingIsRefusedWithoutBuildingIt) {
  for (char open : {'[', '{'}) {
    std::string text;
    if (open == '[') {
      text = nested(200000, '[', ']');
    } else {
      for (int i = 0; i < 200000; ++i) text += "{\"a\":";
      text += "1" + std::string(200000, '}');
    }
    JsonParse p = parseJson(text);
    EXPECT_FALSE(p.ok());
    nlohmann::json copy = p.value;  // a copy of the result is safe whatever came in
    EXPECT_TRUE(copy.is_discarded());
  }
}

}  // namespace
}  // namespace perfhat
