#include "server/server/document.h"

#include <gtest/gtest.h>

namespace perfhat::server {
namespace {

using lsp::TextDocumentContentChangeEvent;

TextDocumentContentChangeEvent edit(int l1, int c1, int l2, int c2, std::string text) {
  return {lsp::Range{{l1, c1}, {l2, c2}}, std::move(text)};
}

TEST(LspDocument, Utf16PositionsWithEmojiAndMultibyte) {
  // "é" is 2 UTF-8 bytes / 1 UTF-16 unit; "😀" is 4 bytes / 2 units (a surrogate pair).
  std::string text = "a😀é;b\nx";
  LineTable lines(text);
  auto enc = PositionEncoding::Utf16;
  EXPECT_EQ(toOffset(text, lines, {0, 1}, enc), 1u);   // before the emoji
  EXPECT_EQ(toOffset(text, lines, {0, 3}, enc), 5u);   // after the emoji (2 units)
  EXPECT_EQ(toOffset(text, lines, {0, 2}, enc), 1u);   // inside the pair snaps to its start
  EXPECT_EQ(toOffset(text, lines, {0, 4}, enc), 7u);   // after "é"
  EXPECT_EQ(toOffset(text, lines, {0, 99}, enc), 9u);  // clamps to the end of the line
  EXPECT_EQ(toOffset(text, lines, {1, 1}, enc), 11u);
  EXPECT_EQ(toOffset(text, lines, {7, 0}, enc), text.size());
  // Byte -> UTF-16.
  EXPECT_EQ(toLsp(text, lines, {0, 5}, enc), (lsp::Position{0, 3}));
  EXPECT_EQ(toLsp(text, lines, {0, 7}, enc), (lsp::Position{0, 4}));
  EXPECT_EQ(toLsp(text, lines, {0, 9}, enc), (lsp::Position{0, 6}));
  // UTF-8 encoding: characters are bytes.
  EXPECT_EQ(toOffset(text, lines, {0, 5}, PositionEncoding::Utf8), 5u);
  EXPECT_EQ(toOffset(text, lines, {0, 3}, PositionEncoding::Utf8), 1u);  // mid-sequence snaps
  EXPECT_EQ(toLsp(text, lines, {0, 7}, PositionEncoding::Utf8), (lsp::Position{0, 7}));
}

TEST(LspDocument, IncrementalEditsAfterAnEmoji) {
  Document d("file:///t.cc", "/t.cc", 1, "int x = f(); // 😀 done\nint y;\n");
  // Replace "done" (after the emoji: UTF-16 columns 19..23) with "ok".
  ASSERT_EQ(d.applyChanges(2, {edit(0, 19, 0, 23, "ok")}, PositionEncoding::Utf16), std::nullopt);
  EXPECT_EQ(d.text(), "int x = f(); // 😀 ok\nint y;\n");
  EXPECT_EQ(d.version(), 2);
  // Insert a line inside a loop-like body, then delete across lines, in one didChange.
  ASSERT_EQ(d.applyChanges(3, {edit(1, 0, 1, 0, "for(;;){g();}\n"), edit(0, 21, 1, 0, "")},
                           PositionEncoding::Utf16),
            std::nullopt);
  EXPECT_EQ(d.text(), "int x = f(); // 😀 okfor(;;){g();}\nint y;\n");
}

TEST(LspDocument, MultibyteEditInUtf16) {
  Document d("file:///t.cc", "/t.cc", 1, "// ñandú\n");
  // Columns: "// " = 3, "ñ"=1 unit, "andú" = 4 units -> replace "andú" (4..8).
  ASSERT_EQ(d.applyChanges(2, {edit(0, 4, 0, 8, "ame")}, PositionEncoding::Utf16), std::nullopt);
  EXPECT_EQ(d.text(), "// ñame\n");
}

TEST(LspDocument, FullReplacementAndInvalidRange) {
  Document d("file:///t.cc", "/t.cc", 1, "abc");
  ASSERT_EQ(d.applyChanges(2, {{std::nullopt, "xyz\n"}}, PositionEncoding::Utf16), std::nullopt);
  EXPECT_EQ(d.text(), "xyz\n");
  auto err = d.applyChanges(3, {edit(0, 3, 0, 1, "!")}, PositionEncoding::Utf16);
  ASSERT_TRUE(err);
  EXPECT_NE(err->find("after end"), std::string::npos);
  EXPECT_EQ(d.text(), "xyz\n");  // unchanged
  EXPECT_EQ(d.version(), 2);
}

TEST(LspDocument, ToByteFindsTheLine) {
  Document d("file:///t.cc", "/t.cc", 1, "é\n\n😀x\n");
  EXPECT_EQ(d.toByte({2, 2}, PositionEncoding::Utf16), (analysis::Position{2, 4}));
  EXPECT_EQ(d.toByte({1, 0}, PositionEncoding::Utf16), (analysis::Position{1, 0}));
  EXPECT_EQ(d.toLsp({2, 5}, PositionEncoding::Utf16), (lsp::Position{2, 3}));
}

}  // namespace
}  // namespace perfhat::server
