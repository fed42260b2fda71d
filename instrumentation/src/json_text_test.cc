#include "json_text.h"

#include <gtest/gtest.h>

#include <string>

namespace {

TEST(InstrJsonText, EscapesQuotesBackslashesAndControlCharacters) {
  EXPECT_EQ(perfhat::json_escape("a\"b\\c\n\x01"), "a\\\"b\\\\c\\n\\u0001");
  EXPECT_EQ(perfhat::json_escape("\r\t\x1f"), "\\r\\t\\u001f");
  EXPECT_EQ(perfhat::json_escape(std::string("a\0b", 3)), "a\\u0000b");
}

TEST(InstrJsonText, PassesUtf8AndPrintableBytesThrough) {
  EXPECT_EQ(perfhat::json_escape("ns::f(int) · 1.5 µs"), "ns::f(int) · 1.5 µs");
  EXPECT_EQ(perfhat::json_escape(""), "");
}

TEST(InstrJsonText, QuotesAString) {
  EXPECT_EQ(perfhat::json_quoted("say \"hi\""), "\"say \\\"hi\\\"\"");
  EXPECT_EQ(perfhat::json_quoted(""), "\"\"");
}

}  // namespace
