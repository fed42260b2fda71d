#include "server/lsp/protocol.h"

#include <gtest/gtest.h>

namespace perfhat::lsp {
namespace {

TEST(LspProtocol, DidChangeWithFullAndIncrementalEvents) {
  json j = json::parse(R"({"textDocument":{"uri":"file:///a.cc","version":3},
    "contentChanges":[{"text":"all"},
                      {"range":{"start":{"line":0,"character":1},"end":{"line":0,"character":2}},
                       "text":"X"}]})");
  auto p = j.get<DidChangeTextDocumentParams>();
  EXPECT_EQ(p.text_document.version, 3);
  ASSERT_EQ(p.content_changes.size(), 2u);
  EXPECT_FALSE(p.content_changes[0].range);
  ASSERT_TRUE(p.content_changes[1].range);
  EXPECT_EQ(p.content_changes[1].range->end.character, 2);
}

TEST(LspProtocol, MissingRequiredFieldThrows) {
  EXPECT_THROW(json::parse(R"({"textDocument":{"uri":"u"}})").get<TextDocumentPositionParams>(),
               json::exception);
  EXPECT_THROW(json::parse(R"({"line":-1,"character":0})").get<Position>(), json::exception);
  EXPECT_THROW(json::parse(R"({"line":"1","character":0})").get<Position>(), json::exception);
  EXPECT_THROW(json::parse(R"({"line":1e99,"character":0})").get<Position>(), json::exception);
  EXPECT_THROW(json::parse(R"({"line":0,"character":2.5})").get<Position>(), json::exception);
  EXPECT_EQ(json::parse(R"({"line":3.0,"character":0})").get<Position>().line, 3);
}

TEST(LspProtocol, ClientCapabilitiesDigest) {
  json j = json::parse(R"({
    "general":{"positionEncodings":["utf-8","utf-16"]},
    "workspace":{"inlayHint":{"refreshSupport":true},"codeLens":{"refreshSupport":false}},
    "window":{"workDoneProgress":true},
    "textDocument":{"inlayHint":{},"hover":{"contentFormat":["plaintext"]}}})");
  auto c = j.get<ClientCapabilities>();
  EXPECT_TRUE(c.inlay_hint);
  EXPECT_TRUE(c.inlay_hint_refresh);
  EXPECT_FALSE(c.code_lens_refresh);
  EXPECT_TRUE(c.work_done_progress);
  EXPECT_FALSE(c.hover_markdown);
  EXPECT_TRUE(c.utf8_positions);
  auto none = json::object().get<ClientCapabilities>();
  EXPECT_FALSE(none.inlay_hint);
  EXPECT_TRUE(none.hover_markdown);
}

TEST(LspProtocol, InitializeParamsFallsBackToWorkspaceFolders) {
  auto p = json::parse(R"({"rootUri":null,"workspaceFolders":[{"uri":"file:///w","name":"w"}],
                          "initializationOptions":{"profile":"design"}})")
               .get<InitializeParams>();
  ASSERT_TRUE(p.root_uri);
  EXPECT_EQ(*p.root_uri, "file:///w");
  EXPECT_EQ(p.initialization_options["profile"], "design");
}

TEST(LspProtocol, InlayHintRoundTrip) {
  InlayHint h{{3, 7}, "⏱ 12.4 ms", 0, "p50 over 1200 calls", true, false};
  json j = h;
  EXPECT_FALSE(j.contains("kind"));
  EXPECT_EQ(j["paddingLeft"], true);
  auto back = j.get<InlayHint>();
  EXPECT_EQ(back.label, h.label);
  EXPECT_EQ(back.position, h.position);
  EXPECT_EQ(back.tooltip, h.tooltip);
}

TEST(LspProtocol, CodeActionRendersAWorkspaceEdit) {
  CodeAction a{"Set iterations", "quickfix", "file:///a.cc", {{{{1, 0}, {1, 0}}, "// x\n"}}, {}};
  json j = a;
  EXPECT_EQ(j["edit"]["changes"]["file:///a.cc"][0]["newText"], "// x\n");
  EXPECT_FALSE(j.contains("command"));
}

TEST(LspProtocol, UriPathRoundTrip) {
  std::string path = "/tmp/a dir/ü#1.cc";
  std::string uri = pathToUri(path);
  EXPECT_EQ(uri, "file:///tmp/a%20dir/%C3%BC%231.cc");
  EXPECT_EQ(uriToPath(uri), path);
  EXPECT_EQ(uriToPath("file://localhost/x.cc"), "/x.cc");
  EXPECT_FALSE(uriToPath("untitled:Untitled-1"));
  EXPECT_FALSE(uriToPath("file:///bad%zz"));
  EXPECT_FALSE(uriToPath("file:///bad%2"));
  EXPECT_FALSE(uriToPath("file://otherhost/x.cc"));
}

TEST(LspProtocol, WorkDoneProgressKinds) {
  json b = WorkDoneProgress{WorkDoneProgress::Kind::Begin, "Fetching", "3 keys", 0};
  EXPECT_EQ(b["kind"], "begin");
  EXPECT_EQ(b["title"], "Fetching");
  json e = WorkDoneProgress{WorkDoneProgress::Kind::End, "", "done", std::nullopt};
  EXPECT_EQ(e["kind"], "end");
  EXPECT_FALSE(e.contains("percentage"));
}

}  // namespace
}  // namespace perfhat::lsp
