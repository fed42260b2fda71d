#include "server/lsp/jsonrpc.h"

#include <gtest/gtest.h>

namespace perfhat::lsp {
namespace {

int errorCode(const Incoming& in) {
  EXPECT_TRUE(in.error_reply.has_value());
  return in.error_reply ? (*in.error_reply)["error"]["code"].get<int>() : 0;
}

TEST(LspJsonRpc, ParseErrorHasNullId) {
  Incoming in = parseMessage("{\"jsonrpc\":\"2.0\",\"id\":1,");
  EXPECT_FALSE(in.message);
  EXPECT_EQ(errorCode(in), kParseError);
  EXPECT_TRUE((*in.error_reply)["id"].is_null());
}

// A 400 KB message nested 200,000 deep parses iteratively, but copying its params recursed once
// per level and crashed the server (SIGSEGV). It is a parse error now, and so is any message
// deeper than kMaxMessageDepth; a message at the limit is still accepted.
TEST(LspJsonRpc, DeeplyNestedMessageIsAParseError) {
  auto nested = [](int depth) {
    return R"({"jsonrpc":"2.0","id":7,"method":"textDocument/hover","params":)" +
           std::string(static_cast<size_t>(depth), '[') +
           std::string(static_cast<size_t>(depth), ']') + "}";
  };
  Incoming deep = parseMessage(nested(200'000));
  EXPECT_FALSE(deep.message);
  EXPECT_EQ(errorCode(deep), kParseError);
  EXPECT_NE(deep.problem.find("nested deeper than"), std::string::npos) << deep.problem;

  EXPECT_EQ(errorCode(parseMessage(nested(kMaxMessageDepth))), kParseError);
  Incoming at_limit = parseMessage(nested(kMaxMessageDepth - 1));
  ASSERT_TRUE(at_limit.message) << at_limit.problem;
  EXPECT_TRUE(at_limit.message->params.is_array());

  // Unterminated and deep: still one parse error, no crash.
  EXPECT_EQ(errorCode(parseMessage(std::string(200'000, '['))), kParseError);
}

TEST(LspJsonRpc, InvalidRequests) {
  EXPECT_EQ(errorCode(parseMessage("[1,2]")), kInvalidRequest);
  EXPECT_EQ(errorCode(parseMessage("42")), kInvalidRequest);
  EXPECT_EQ(errorCode(parseMessage(R"({"jsonrpc":"1.0","id":3,"method":"x"})")), kInvalidRequest);
  EXPECT_EQ(errorCode(parseMessage(R"({"id":3,"method":"x"})")), kInvalidRequest);
  EXPECT_EQ(errorCode(parseMessage(R"({"jsonrpc":"2.0","id":3,"method":7})")), kInvalidRequest);
  EXPECT_EQ(errorCode(parseMessage(R"({"jsonrpc":"2.0","id":{"a":1},"method":"x"})")),
            kInvalidRequest);
  EXPECT_EQ(errorCode(parseMessage(R"({"jsonrpc":"2.0","id":3,"method":"x","params":5})")),
            kInvalidRequest);
  EXPECT_EQ(errorCode(parseMessage(R"({"jsonrpc":"2.0","id":3})")), kInvalidRequest);
}

TEST(LspJsonRpc, InvalidRequestKeepsTheIdWhenItIsValid) {
  Incoming in = parseMessage(R"({"jsonrpc":"2.0","id":"abc","method":1})");
  ASSERT_TRUE(in.error_reply);
  EXPECT_EQ((*in.error_reply)["id"], "abc");
}

TEST(LspJsonRpc, ClassifiesRequestsNotificationsAndResponses) {
  Incoming r = parseMessage(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{}})");
  ASSERT_TRUE(r.message);
  EXPECT_EQ(r.message->kind, Message::Kind::Request);
  EXPECT_EQ(r.message->id, 1);
  EXPECT_EQ(r.message->method, "initialize");

  Incoming n = parseMessage(R"({"jsonrpc":"2.0","method":"initialized"})");
  ASSERT_TRUE(n.message);
  EXPECT_EQ(n.message->kind, Message::Kind::Notification);
  EXPECT_TRUE(n.message->params.is_null());

  Incoming ok = parseMessage(R"({"jsonrpc":"2.0","id":"s1","result":null})");
  ASSERT_TRUE(ok.message);
  EXPECT_EQ(ok.message->kind, Message::Kind::Response);
  EXPECT_FALSE(ok.message->error);

  Incoming err = parseMessage(R"({"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"no"}})");
  ASSERT_TRUE(err.message);
  ASSERT_TRUE(err.message->error);
  EXPECT_EQ(err.message->error->code, kMethodNotFound);
  EXPECT_EQ(err.message->error->message, "no");
}

TEST(LspJsonRpc, InvalidUtf8IsAParseError) {
  Incoming in = parseMessage("{\"jsonrpc\":\"2.0\",\"method\":\"\xff\xfe\"}");
  EXPECT_EQ(errorCode(in), kParseError);
}

TEST(LspJsonRpc, Builders) {
  EXPECT_EQ(makeResult(5, {{"a", 1}}).dump(), R"({"id":5,"jsonrpc":"2.0","result":{"a":1}})");
  json e = makeError("x", kRequestCancelled, "cancelled");
  EXPECT_EQ(e["error"]["code"], -32800);
  EXPECT_EQ(e["id"], "x");
  EXPECT_FALSE(makeNotification("initialized", nullptr).contains("params"));
  EXPECT_EQ(makeRequest(1, "m", json::object())["method"], "m");
}

}  // namespace
}  // namespace perfhat::lsp
