// Push path end to end (issue #3, DESIGN §5 "Sync"): real perfhat-handler processes, the real
// perfhat-lsp over pipes, spans POSTed as OTLP JSON. New data reaching the handler must make the
// server send workspace/inlayHint/refresh and serve the new value at the next inlayHint.
//
// The plain change poll is set to an hour (.perfhat.json), and the cache TTL is the default 10
// minutes, so within the test's timeouts only the long-poll can deliver the change.
#include <unistd.h>

#include <fstream>
#include <regex>
#include <thread>

#include <gtest/gtest.h>

#include "tests/integration/handler_process.h"
#include "tests/integration/handler_test_util.h"
#include "tests/integration/lsp_client.h"

namespace perfhat::testing {
namespace {

constexpr const char* kSource = R"src(namespace demo {
                                      int leaf(int x);
                                      int root(int n) {
                                        int s = 0;
                                        s += leaf(n);
                                        return s;
                                      }
                                      }  // namespace demo
)src";
constexpr const char* kLeaf = "demo::leaf(int)";
constexpr int kCallLine = 4;  // 0-based line of `s += leaf(n);`

json pos(int line, int character) { return {{"line", line}, {"character", character}}; }

void ingest(const std::string& url, double latency_ns, size_t n, uint64_t seed) {
  httplib::Client c = client(url);
  auto res = c.Post("/v1/traces",
                    otlp::encodeJson(spansFor(kLeaf, std::vector<double>(n, latency_ns), seed)),
                    "application/json");
  ASSERT_TRUE(res) << "ingest: no response";
  ASSERT_EQ(res->status, 200) << res->body;
}

// Blocks (bounded) until `url` serves data for kLeaf with at least `count` calls.
bool waitForCount(const std::string& url, uint64_t count) {
  httplib::Client c = client(url);
  for (int i = 0; i < 600; ++i) {
    BatchGetResponse r = batchGet(c, {kLeaf});
    if (!r.items.empty() && r.items[0].stats && r.items[0].stats->count >= count) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

// Milliseconds in the first "N ms" of the hint labels on `line` (-1 when there is none).
double hintMs(const json& hints, int line) {
  static const std::regex kMs(R"(([0-9]+(\.[0-9]+)?) ms)");
  for (const auto& h : hints) {
    if (h["position"]["line"] != line) continue;
    std::string label = h["label"].is_string() ? h["label"].get<std::string>() : h["label"].dump();
    std::smatch m;
    if (std::regex_search(label, m, kMs)) return std::stod(m[1]);
  }
  return -1;
}

class PushRefresh : public ::testing::Test {
 protected:
  void SetUp() override {
    src_ = dir_ / "app.cc";
    std::ofstream(src_) << kSource;
    std::ofstream(dir_ / "compile_commands.json")
        << json::array({{{"directory", dir_.path().string()},
                         {"file", src_},
                         {"command", "c++ -std=c++20 -c app.cc"}}})
               .dump();
    std::ofstream(dir_ / ".perfhat.json") << R"({"changesPollSeconds": 3600})";
  }

  std::unique_ptr<LspProcess> startLsp(const std::string& handler_url) {
    auto p = std::make_unique<LspProcess>(
        PERFHAT_LSP_BIN, std::vector<std::string>{"--handler", handler_url}, dir_ / "server.log");
    auto init =
        p->call("initialize",
                {{"processId", getpid()},
                 {"rootUri", "file://" + dir_.path().string()},
                 {"capabilities",
                  {{"textDocument", {{"inlayHint", json::object()}, {"codeLens", json::object()}}},
                   {"workspace",
                    {{"inlayHint", {{"refreshSupport", true}}},
                     {"codeLens", {{"refreshSupport", true}}}}}}}});
    EXPECT_TRUE(init && init->contains("result")) << (init ? init->dump() : "no reply");
    p->notify("initialized", json::object());
    p->notify("textDocument/didOpen",
              {{"textDocument",
                {{"uri", uri()}, {"languageId", "cpp"}, {"version", 1}, {"text", kSource}}}});
    return p;
  }
  json hints(LspProcess& p) {
    auto r =
        p.call("textDocument/inlayHint", {{"textDocument", {{"uri", uri()}}},
                                          {"range", {{"start", pos(0, 0)}, {"end", pos(100, 0)}}}});
    EXPECT_TRUE(r && r->contains("result")) << (r ? r->dump() : "no reply") << serverLog();
    return r ? (*r)["result"] : json();
  }
  std::string uri() const { return "file://" + src_; }
  std::string serverLog() const {
    std::ifstream in(dir_ / "server.log");
    return "\nserver log:\n" + std::string(std::istreambuf_iterator<char>(in), {});
  }

  // Data at ~2 ms is shown; 20× more calls at 80 ms reach `ingest_url`; the server, attached to
  // `lsp_url`, must push a refresh and then show the new value.
  void run(const std::string& ingest_url, const std::string& lsp_url) {
    ingest(ingest_url, 2e6, 100, 1);
    ASSERT_TRUE(waitForCount(lsp_url, 100)) << "initial data never reached " << lsp_url;

    auto lsp = startLsp(lsp_url);
    double before = hintMs(hints(*lsp), kCallLine);
    ASSERT_GT(before, 1.0) << hints(*lsp).dump() << serverLog();
    ASSERT_LT(before, 5.0) << hints(*lsp).dump();
    size_t cursor = lsp->messageCount();

    ingest(ingest_url, 80e6, 2000, 2);
    auto is = [](const char* method) {
      return
          [method](const json& m) { return m.value("method", "") == method && m.contains("id"); };
    };
    size_t lens_cursor = cursor;
    auto refresh =
        lsp->waitFor(is("workspace/inlayHint/refresh"), std::chrono::seconds(90), &cursor);
    ASSERT_TRUE(refresh) << "no workspace/inlayHint/refresh after new data" << serverLog();
    lsp->send({{"jsonrpc", "2.0"}, {"id", (*refresh)["id"]}, {"result", nullptr}});
    auto lens =
        lsp->waitFor(is("workspace/codeLens/refresh"), std::chrono::seconds(30), &lens_cursor);
    ASSERT_TRUE(lens) << "no workspace/codeLens/refresh" << serverLog();
    lsp->send({{"jsonrpc", "2.0"}, {"id", (*lens)["id"]}, {"result", nullptr}});

    double after = hintMs(hints(*lsp), kCallLine);
    EXPECT_GT(after, 40.0) << "hint still shows old data: " << hints(*lsp).dump();
    EXPECT_EQ(lsp->shutdownAndWait(), 0);
  }

  TempDir dir_{"push"};
  std::string src_;
};

// Spans reach the handler the LSP is attached to: the ingest commit wakes the long-poll.
TEST_F(PushRefresh, IngestIntoTheAttachedHandlerRefreshesHints) {
  HandlerProcess deployed(
      {"--mode", "deployed", "--allow-unauthenticated", "--store", dir_ / "deployed.sqlite"});
  run(deployed.url(), deployed.url());
}

// Spans reach the deployed handler; the local handler's pull commit wakes the long-poll.
TEST_F(PushRefresh, UpstreamPullIntoTheLocalHandlerRefreshesHints) {
  HandlerProcess deployed(
      {"--mode", "deployed", "--allow-unauthenticated", "--store", dir_ / "deployed.sqlite"});
  HandlerProcess local({"--mode", "local", "--store", dir_ / "local.sqlite", "--upstream",
                        deployed.url(), "--sync-interval", "0.2"});
  run(deployed.url(), local.url());
}

// --check with a dataset file reports the keys it looked up (not the warm run's zero).
TEST_F(PushRefresh, CheckWithAFeedbackFileReportsTheKeysLookedUp) {
  std::ofstream(dir_ / "feedback.json")
      << R"js({"items":[{"key":"demo::leaf(int)","stats":{"count":10,"mean_ns":2e6,"p50_ns":2e6}}]})js";
  std::string out = dir_ / "check.out";
  std::string cmd = std::string(PERFHAT_LSP_BIN) + " --check " + src_ + " --feedback-file " +
                    (dir_ / "feedback.json") + " --no-color > " + out + " 2>/dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  std::ifstream in(out);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      text, m, std::regex(R"(([0-9]+) keys looked up in the dataset, ([0-9]+) items)")))
      << text;
  EXPECT_GT(std::stoi(m[1]), 0) << text;
  EXPECT_EQ(std::stoi(m[2]), 1) << text;
}

}  // namespace
}  // namespace perfhat::testing
