#include "server/lsp/transport.h"

#include <unistd.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace perfhat::lsp {
namespace {

std::vector<Frame> drain(FrameParser& p) {
  std::vector<Frame> out;
  while (auto f = p.next()) out.push_back(*f);
  return out;
}

TEST(LspFraming, OneMessage) {
  FrameParser p;
  p.feed(encodeFrame(R"({"a":1})"));
  auto frames = drain(p);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_TRUE(frames[0].ok);
  EXPECT_EQ(frames[0].body, R"({"a":1})");
  EXPECT_EQ(p.buffered(), 0u);
}

TEST(LspFraming, SplitReadsByteByByte) {
  std::string stream = encodeFrame("{\"x\":\"héllo ⏱\"}") + encodeFrame("{}");
  FrameParser p;
  std::vector<Frame> frames;
  for (char c : stream) {
    p.feed(std::string_view(&c, 1));
    while (auto f = p.next()) frames.push_back(*f);
  }
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[0].body, "{\"x\":\"héllo ⏱\"}");
  EXPECT_EQ(frames[1].body, "{}");
}

TEST(LspFraming, MultipleMessagesInOneRead) {
  FrameParser p;
  p.feed(encodeFrame("[1]") + encodeFrame("[2]") + encodeFrame("[3]"));
  auto frames = drain(p);
  ASSERT_EQ(frames.size(), 3u);
  EXPECT_EQ(frames[2].body, "[3]");
}

TEST(LspFraming, HeaderNamesAreCaseInsensitiveAndContentTypeIsIgnored) {
  FrameParser p;
  p.feed("content-length: 2\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{}");
  auto frames = drain(p);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].body, "{}");
}

TEST(LspFraming, NonNumericContentLengthIsAnErrorAndTheNextMessageStillArrives) {
  FrameParser p;
  p.feed("Content-Length: abc\r\n\r\n{}" + encodeFrame("[7]"));
  auto frames = drain(p);
  ASSERT_EQ(frames.size(), 3u);  // header error, garbage "{}", then the good message
  EXPECT_FALSE(frames[0].ok);
  EXPECT_NE(frames[0].error.find("bad Content-Length"), std::string::npos);
  EXPECT_FALSE(frames[1].ok);
  EXPECT_TRUE(frames[2].ok);
  EXPECT_EQ(frames[2].body, "[7]");
}

TEST(LspFraming, MissingContentLengthIsAnError) {
  FrameParser p;
  p.feed("Content-Length: 3\r\n\r\n[1]");  // good
  p.feed("Content-Lengthx: 3\r\n\r\n");    // name differs: no length header
  auto frames = drain(p);
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_TRUE(frames[0].ok);
  EXPECT_FALSE(frames[1].ok);
  EXPECT_NE(frames[1].error.find("missing Content-Length"), std::string::npos);
}

TEST(LspFraming, TooSmallContentLengthResynchronisesOnTheNextHeader) {
  FrameParser p;
  // Declares 5 bytes of a 9-byte body: the body is cut, the rest is garbage.
  p.feed("Content-Length: 5\r\n\r\n{\"a\":123}" + encodeFrame("{\"b\":2}"));
  auto frames = drain(p);
  ASSERT_EQ(frames.size(), 3u);
  EXPECT_TRUE(frames[0].ok);
  EXPECT_EQ(frames[0].body, "{\"a\":");
  EXPECT_FALSE(frames[1].ok);
  EXPECT_TRUE(frames[2].ok);
  EXPECT_EQ(frames[2].body, "{\"b\":2}");
}

TEST(LspFraming, HugeContentLengthIsRefused) {
  FrameParser p(FramingLimits{1024, 100});
  p.feed("Content-Length: 101\r\n\r\n");
  auto f = p.next();
  ASSERT_TRUE(f);
  EXPECT_FALSE(f->ok);
  EXPECT_NE(f->error.find("exceeds"), std::string::npos);
}

TEST(LspFraming, EndlessHeaderIsDropped) {
  FrameParser p(FramingLimits{64, 1000});
  p.feed("Content-Length: 3" + std::string(200, ' '));
  auto f = p.next();
  ASSERT_TRUE(f);
  EXPECT_FALSE(f->ok);
  p.feed(encodeFrame("[1]"));
  std::vector<Frame> rest = drain(p);
  ASSERT_FALSE(rest.empty());
  EXPECT_TRUE(rest.back().ok);
  EXPECT_EQ(rest.back().body, "[1]");
}

TEST(LspFraming, WaitsForACompleteBody) {
  FrameParser p;
  p.feed("Content-Length: 10\r\n\r\n12345");
  EXPECT_FALSE(p.next());
  p.feed("67890");
  auto f = p.next();
  ASSERT_TRUE(f);
  EXPECT_EQ(f->body, "1234567890");
}

TEST(LspFdTransport, RoundTripOverAPipe) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  FdTransport writer(-1, fds[1]);
  FdTransport reader(fds[0], -1);
  ASSERT_TRUE(writer.send(R"({"jsonrpc":"2.0"})"));
  ASSERT_TRUE(writer.send("[]"));
  close(fds[1]);
  auto a = reader.read();
  auto b = reader.read();
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->body, R"({"jsonrpc":"2.0"})");
  EXPECT_EQ(b->body, "[]");
  EXPECT_FALSE(reader.read());  // EOF
  close(fds[0]);
}

}  // namespace
}  // namespace perfhat::lsp
