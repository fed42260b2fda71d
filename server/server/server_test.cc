// The server's scheduling and protocol behaviour, driven in-process. The analyzer here is a
// test strategy whose timing the test controls (a gate), so deferral and cancellation are
// deterministic; feedback sources, documents and features are the real ones.
#include "server/server/server.h"

#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include "server/server/sink_test_util.h"

namespace perfhat::server {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

class GatedAnalyzer : public Analyzer {
 public:
  analysis::SnapshotPtr analyze(const AnalysisInput& in, const FeedbackFetch& fetch,
                                std::vector<std::string>&) override {
    {
      std::unique_lock lock(mu_);
      cv_.wait_for(lock, 20s, [&] { return open_; });
      texts_.push_back(in.text);
    }
    auto view = fetch({"app::f()"});
    auto s = std::make_shared<analysis::Snapshot>();
    s->path = in.path;
    s->version = in.version;
    s->stale = view->stale();
    analysis::FunctionInfo f;
    f.key = "app::f()";
    f.name = "f";
    f.range = {{0, 0}, {0, 1}};
    f.name_range = {{0, 0}, {0, 1}};
    analysis::Node root;
    root.range = f.range;
    if (const FeedbackItem* item = view->find("app::f()"); item && item->stats) {
      root.measured = item->stats;
      root.estimate.provenance = analysis::Provenance::Measured;
      root.estimate.dist = {item->stats->mean_ns, item->stats->p50_ns, item->stats->p90_ns,
                            item->stats->p99_ns, item->stats->count};
      f.match = analysis::MatchKind::Exact;
    }
    f.nodes.push_back(root);
    s->functions.push_back(f);
    if (two_of_one_key_) {
      // Two bodies under one key, as two block-scope classes of one name give.
      s->functions.back().body_hash = 1;
      f.body_hash = 2;
      s->functions.push_back(f);
    }
    return s;
  }
  void setTwoOfOneKey(bool on) { two_of_one_key_ = on; }
  void setOpen(bool open) {
    {
      std::lock_guard lock(mu_);
      open_ = open;
    }
    cv_.notify_all();
  }
  std::vector<std::string> texts() {
    std::lock_guard lock(mu_);
    return texts_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = true;
  std::atomic<bool> two_of_one_key_{false};
  std::vector<std::string> texts_;
};

using testing::Sink;

class LspServerTest : public ::testing::Test {
 protected:
  ~LspServerTest() override {
    if (!feedback_file_.empty()) std::filesystem::remove(feedback_file_);
  }
  void start(json cli = json::object(), json caps = json::object()) {
    auto a = std::make_unique<GatedAnalyzer>();
    analyzer_ = a.get();
    ConfigLayers layers;
    layers.cli = std::move(cli);
    log_.setLevel(LogLevel::Warning);
    server_ = std::make_unique<Server>(
        layers, std::move(a), [this](const json& j) { sink_.push(j); }, log_);
    send(1, "initialize", {{"rootUri", nullptr}, {"capabilities", caps}});
    ASSERT_TRUE(sink_.reply(1));
    notify("initialized", json::object());
  }
  void send(const json& id, const std::string& method, json params) {
    server_->handleBody(
        json{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}}.dump());
  }
  void notify(const std::string& method, json params) {
    server_->handleBody(json{{"jsonrpc", "2.0"}, {"method", method}, {"params", params}}.dump());
  }
  void open(const std::string& text, int version = 1) {
    notify("textDocument/didOpen",
           {{"textDocument",
             {{"uri", uri_}, {"languageId", "cpp"}, {"version", version}, {"text", text}}}});
  }
  json lensRequest(int id) {
    send(id, "textDocument/codeLens", {{"textDocument", {{"uri", uri_}}}});
    auto r = sink_.reply(id);
    EXPECT_TRUE(r);
    return r ? *r : json();
  }
  // Starts the server on a feedback file holding `content` (removed after the test), opens the
  // document and returns its code lenses.
  json lensesOnFeedbackFile(const std::string& content) {
    feedback_file_ = "/tmp/perfhat-feedback-" + std::to_string(::getpid()) + ".json";
    std::ofstream(feedback_file_) << content;
    start(json{{"feedbackFile", feedback_file_}});
    open("int f();\n");
    return lensRequest(2);
  }
  static int errorCode(const std::optional<json>& r) {
    return r && r->contains("error") ? (*r)["error"]["code"].get<int>() : 0;
  }

  Logger log_;
  Sink sink_;
  GatedAnalyzer* analyzer_ = nullptr;
  std::unique_ptr<Server> server_;
  std::string uri_ = "file:///tmp/perfhat-server-test/app.cc";
  std::string feedback_file_;
};

TEST_F(LspServerTest, RequestsBeforeInitializeAreRefused) {
  auto a = std::make_unique<GatedAnalyzer>();
  Server s(
      {}, std::move(a), [this](const json& j) { sink_.push(j); }, log_);
  s.handleBody(R"js({"jsonrpc":"2.0","id":9,"method":"textDocument/hover","params":{}})js");
  EXPECT_EQ(errorCode(sink_.reply(9)), lsp::kServerNotInitialized);
}

TEST_F(LspServerTest, InitializeAdvertisesCapabilities) {
  start(json::object(), {{"general", {{"positionEncodings", {"utf-8"}}}}});
  auto r = sink_.reply(1);
  const json& caps = (*r)["result"]["capabilities"];
  EXPECT_EQ(caps["positionEncoding"], "utf-8");
  EXPECT_EQ(caps["textDocumentSync"]["change"], 2);
  EXPECT_TRUE(caps.contains("inlayHintProvider"));
  EXPECT_THAT(caps["executeCommandProvider"]["commands"].get<std::vector<std::string>>(),
              ::testing::Contains("perfhat.setIterations"));
}

TEST_F(LspServerTest, ProtocolErrorsAndTheServerKeepsAnswering) {
  start();
  server_->handleBody("{ this is not json");
  EXPECT_EQ(errorCode(sink_.waitFor([](const json& m) { return m.contains("error"); })),
            lsp::kParseError);
  server_->handleBody(R"js({"jsonrpc":"2.0","id":2,"method":"no/such/method"})js");
  EXPECT_EQ(errorCode(sink_.reply(2)), lsp::kMethodNotFound);
  server_->handleBody(R"js({"jsonrpc":"2.0","method":"no/such/notification"})js");
  server_->handleBody(R"js({"jsonrpc":"2.0","method":"$/setTrace","params":{"value":"off"}})js");
  server_->handleBody(
      R"js({"jsonrpc":"2.0","id":3,"method":"textDocument/hover","params":{"x":1}})js");
  EXPECT_EQ(errorCode(sink_.reply(3)), lsp::kInvalidParams);
  send(4, "textDocument/codeLens", {{"textDocument", {{"uri", "file:///never/opened.cc"}}}});
  auto r = sink_.reply(4);
  EXPECT_EQ(errorCode(r), lsp::kInvalidParams);
  EXPECT_NE((*r)["error"]["message"].get<std::string>().find("not open"), std::string::npos);
  server_->handle(lsp::Frame{false, {}, "bad Content-Length"});  // logged, no reply
  // Still alive: a valid request is answered.
  open("int f() { return 1; }\n");
  auto lens = lensRequest(5);
  EXPECT_TRUE(lens.contains("result"));
}

TEST_F(LspServerTest, DeferredRequestCanBeCancelled) {
  start();
  analyzer_->setOpen(false);
  open("int f();\n");
  send(7, "textDocument/codeLens", {{"textDocument", {{"uri", uri_}}}});
  notify("$/cancelRequest", {{"id", 7}});
  auto r = sink_.reply(7);
  EXPECT_EQ(errorCode(r), lsp::kRequestCancelled);
  notify("$/cancelRequest", {{"id", 12345}});  // unknown id: ignored
  analyzer_->setOpen(true);
  auto lens = lensRequest(8);
  ASSERT_TRUE(lens["result"].is_array());
  EXPECT_EQ(lens["result"].size(), 1u);
}

TEST_F(LspServerTest, IncrementalEditsReachTheAnalyzer) {
  start(json{{"debounce", {{"minMs", 1}, {"maxMs", 5}}}});
  open("int f() {\n  return 1;\n}\n");
  lensRequest(2);
  auto change = [&](int version, int l1, int c1, int l2, int c2, const std::string& text) {
    json range = {{"start", {{"line", l1}, {"character", c1}}},
                  {"end", {{"line", l2}, {"character", c2}}}};
    json event = {{"range", range}, {"text", text}};
    notify("textDocument/didChange", {{"textDocument", {{"uri", uri_}, {"version", version}}},
                                      {"contentChanges", json::array({event})}});
  };
  change(2, 1, 9, 1, 10, "42");       // return 42;
  change(3, 1, 2, 1, 2, "/* 😀 */ ");  // emoji before return
  change(4, 1, 18, 1, 20, "7");       // after the emoji (2 UTF-16 units): 42 -> 7
  lensRequest(3);
  ASSERT_FALSE(analyzer_->texts().empty());
  EXPECT_EQ(analyzer_->texts().back(), "int f() {\n  /* 😀 */ return 7;\n}\n");
  auto diags = sink_.waitFor([](const json& m) {
    return m.value("method", "") == "textDocument/publishDiagnostics" &&
           m["params"]["version"] == 4;
  });
  EXPECT_TRUE(diags);
}

// The edit loop bench/index measures: a change, then at once a request for the changed text.
// The request waits for the change's build and is answered from it: one analysis per edit.
TEST_F(LspServerTest, AnEditFollowedByARequestIsAnalysedOnce) {
  start(json{{"debounce", {{"minMs", 0}, {"maxMs", 0}}}});
  open("int f() {\n  return 1;\n}\n");
  lensRequest(2);
  for (int version = 2; version <= 4; ++version) {
    json range = {{"start", {{"line", 1}, {"character", 9}}},
                  {"end", {{"line", 1}, {"character", 10}}}};
    notify(
        "textDocument/didChange",
        {{"textDocument", {{"uri", uri_}, {"version", version}}},
         {"contentChanges", json::array({{{"range", range}, {"text", std::to_string(version)}}})}});
    send(
        10 + version, "textDocument/inlayHint",
        {{"textDocument", {{"uri", uri_}}},
         {"range",
          {{"start", {{"line", 0}, {"character", 0}}}, {"end", {{"line", 3}, {"character", 0}}}}}});
    ASSERT_TRUE(sink_.reply(10 + version));
    ASSERT_TRUE(sink_.waitFor([&](const json& m) {
      return m.value("method", "") == "textDocument/publishDiagnostics" &&
             m["params"]["version"] == version;
    }));
  }
  ASSERT_TRUE(server_->waitIdle(20s));
  const std::vector<std::string> texts = analyzer_->texts();
  ASSERT_EQ(texts.size(), 4u) << "the open text and one build per edit";
  EXPECT_EQ(texts.back(), "int f() {\n  return 4;\n}\n");
}

// An edit that changes no function's body re-analyses no other open document, also when a key
// has two bodies in the edited file.
TEST_F(LspServerTest, AnEditThatKeepsTwoBodiesOfOneKeyRebuildsNoOtherDocument) {
  start(json{{"debounce", {{"minMs", 0}, {"maxMs", 0}}}});
  analyzer_->setTwoOfOneKey(true);
  const std::string other = "file:///tmp/perfhat-server-test/other.cc";
  open("int f();\n");
  notify("textDocument/didOpen",
         {{"textDocument",
           {{"uri", other}, {"languageId", "cpp"}, {"version", 1}, {"text", "int other();\n"}}}});
  ASSERT_TRUE(server_->waitIdle(20s));
  json range = {{"start", {{"line", 0}, {"character", 0}}},
                {"end", {{"line", 0}, {"character", 0}}}};
  notify("textDocument/didChange",
         {{"textDocument", {{"uri", uri_}, {"version", 2}}},
          {"contentChanges", json::array({{{"range", range}, {"text", "// note\n"}}})}});
  ASSERT_TRUE(sink_.waitFor([](const json& m) {
    return m.value("method", "") == "textDocument/publishDiagnostics" &&
           m["params"]["version"] == 2;
  }));
  ASSERT_TRUE(server_->waitIdle(20s));
  const std::vector<std::string> texts = analyzer_->texts();
  EXPECT_EQ(std::count(texts.begin(), texts.end(), "int other();\n"), 1)
      << "the other document was re-analysed though no body changed";
  EXPECT_EQ(texts.size(), 3u);
}

TEST_F(LspServerTest, CorruptFeedbackFileIsReportedOnceAndTheServerKeepsServing) {
  auto lens = lensesOnFeedbackFile("{\"items\": [ {\"key\": ");
  ASSERT_EQ(lens["result"].size(), 1u);
  EXPECT_THAT(lens["result"][0]["command"]["title"].get<std::string>(),
              ::testing::HasSubstr("no production data"));
  notify("textDocument/didChange", {{"textDocument", {{"uri", uri_}, {"version", 2}}},
                                    {"contentChanges", json::array({{{"text", "int f(); "}}})}});
  lensRequest(3);
  EXPECT_EQ(sink_.count("window/showMessage"), 1u);
}

TEST_F(LspServerTest, FeedbackFileDataReachesCodeLensAndShowData) {
  auto lens = lensesOnFeedbackFile(R"js({"items":[{"key":"app::f()","stats":{"count":1200,
      "mean_ns":3.1e6,"p50_ns":2.8e6,"p90_ns":6e6,"p99_ns":1.2e7}}]})js");
  ASSERT_EQ(lens["result"].size(), 1u);
  EXPECT_THAT(lens["result"][0]["command"]["title"].get<std::string>(),
              ::testing::HasSubstr("prod"));
  send(3, "workspace/executeCommand",
       {{"command", "perfhat.showData"}, {"arguments", {"app::f()"}}});
  auto r = sink_.reply(3);
  ASSERT_TRUE(r && r->contains("result")) << r->dump();
  EXPECT_EQ((*r)["result"]["stats"]["count"], 1200);
  send(4, "workspace/executeCommand", {{"command", "perfhat.nope"}});
  EXPECT_EQ(errorCode(sink_.reply(4)), lsp::kInvalidParams);
}

TEST_F(LspServerTest, UnreachableHandlerShowsOneMessageAndMarksStale) {
  httplib::Server probe;
  int port = probe.bind_to_any_port("127.0.0.1");
  probe.stop();
  start(json{{"handler", "http://127.0.0.1:" + std::to_string(port)},
             {"http", {{"connectTimeoutMs", 200}, {"readTimeoutMs", 200}}},
             {"debounce", {{"minMs", 1}, {"maxMs", 5}}}});
  open("int f();\n");
  lensRequest(2);
  notify("textDocument/didChange", {{"textDocument", {{"uri", uri_}, {"version", 2}}},
                                    {"contentChanges", json::array({{{"text", "int f(); "}}})}});
  lensRequest(3);
  EXPECT_EQ(sink_.count("window/showMessage"), 1u);
  auto msg =
      sink_.waitFor([](const json& m) { return m.value("method", "") == "window/showMessage"; });
  EXPECT_THAT((*msg)["params"]["message"].get<std::string>(), ::testing::HasSubstr("unreachable"));
}

TEST_F(LspServerTest, BadSettingsAreShownToTheUserOnce) {
  start();
  const json bad = {{"settings", {{"perfhat", {{"cache", {{"maxEntries", "lots"}}}}}}}};
  notify("workspace/didChangeConfiguration", bad);
  auto msg =
      sink_.waitFor([](const json& m) { return m.value("method", "") == "window/showMessage"; });
  ASSERT_TRUE(msg);
  EXPECT_THAT((*msg)["params"]["message"].get<std::string>(),
              ::testing::HasSubstr("cache.maxEntries"));
  notify("workspace/didChangeConfiguration", bad);  // the same warning again: not repeated
  lensRequest(2);
  EXPECT_EQ(sink_.count("window/showMessage"), 1u);
}

TEST_F(LspServerTest, RefreshCommandAsksTheClientToRefreshHints) {
  std::string path = "/tmp/perfhat-refresh-" + std::to_string(::getpid()) + ".json";
  std::ofstream(path) << R"js({"items":[]})js";
  start(json{{"feedbackFile", path}},
        {{"workspace",
          {{"inlayHint", {{"refreshSupport", true}}}, {"codeLens", {{"refreshSupport", true}}}}},
         {"textDocument", {{"inlayHint", json::object()}}}});
  open("int f();\n");
  lensRequest(2);
  std::ofstream(path)
      << R"js({"items":[{"key":"app::f()","stats":{"count":5,"p50_ns":1e6,"mean_ns":1e6}}]})js";
  send(3, "workspace/executeCommand", {{"command", "perfhat.refresh"}});
  EXPECT_TRUE(sink_.reply(3));
  EXPECT_TRUE(sink_.waitFor(
      [](const json& m) { return m.value("method", "") == "workspace/inlayHint/refresh"; }));
  EXPECT_TRUE(sink_.waitFor(
      [](const json& m) { return m.value("method", "") == "workspace/codeLens/refresh"; }));
  auto lens = lensRequest(4);
  EXPECT_THAT(lens["result"][0]["command"]["title"].get<std::string>(),
              ::testing::HasSubstr("prod"));
  std::filesystem::remove(path);
}

TEST_F(LspServerTest, SetIterationsSendsAnEditAndRejectsBadArguments) {
  start();
  open("int f() {\n\tfor (;;) {}\n}\n");
  lensRequest(2);
  send(3, "workspace/executeCommand",
       {{"command", "perfhat.setIterations"}, {"arguments", {uri_, 1, 50}}});
  auto r = sink_.reply(3);
  ASSERT_TRUE(r && r->contains("result"));
  auto edit =
      sink_.waitFor([](const json& m) { return m.value("method", "") == "workspace/applyEdit"; });
  ASSERT_TRUE(edit);
  const json& change = (*edit)["params"]["edit"]["changes"][uri_][0];
  EXPECT_EQ(change["newText"], "\t// perfhat: iterations=50\n");  // the loop's indentation
  EXPECT_EQ(change["range"]["start"]["line"], 1);
  send(4, "workspace/executeCommand",
       {{"command", "perfhat.setIterations"}, {"arguments", {uri_, 1, -3}}});
  EXPECT_EQ(errorCode(sink_.reply(4)), lsp::kInvalidParams);
  send(5, "workspace/executeCommand",
       {{"command", "perfhat.setIterations"}, {"arguments", {uri_, 99, 3}}});
  EXPECT_EQ(errorCode(sink_.reply(5)), lsp::kInvalidParams);
  send(6, "workspace/executeCommand",
       {{"command", "perfhat.setIterations"}, {"arguments", {uri_, 1, 1e99}}});
  EXPECT_EQ(errorCode(sink_.reply(6)), lsp::kInvalidParams);
}

TEST_F(LspServerTest, SetIterationsReplacesOnlyTheAnnotationTheAnalysisReads) {
  start();
  const std::string annotated = "  // perfhat: iterations=5 rows";
  open("int f() {\n" + annotated +
       "\n"                                   // 1: the loop's annotation (a note may follow)
       "  for (;;) {}\n"                      // 2
       "  // perfhat: iterations=?\n"         // 3: no number: not an annotation
       "  for (;;) {}\n"                      // 4
       "  x = 1; // perfhat: iterations=5\n"  // 5: the statement's comment, not the loop's
       "  for (;;) {}\n"                      // 6
       "}\n");
  lensRequest(2);
  auto setIterations = [&](int id, int line) {
    const size_t from = sink_.all().size();
    send(id, "workspace/executeCommand",
         {{"command", "perfhat.setIterations"}, {"arguments", {uri_, line, 50}}});
    EXPECT_TRUE(sink_.reply(id));
    auto edit = sink_.waitFor(
        [](const json& m) { return m.value("method", "") == "workspace/applyEdit"; }, from);
    return edit ? (*edit)["params"]["edit"]["changes"][uri_][0] : json();
  };
  json replaced = setIterations(3, 2);
  EXPECT_EQ(replaced["newText"], "  // perfhat: iterations=50");
  EXPECT_EQ(replaced["range"]["start"], (json{{"line", 1}, {"character", 0}}));
  EXPECT_EQ(replaced["range"]["end"], (json{{"line", 1}, {"character", annotated.size()}}));
  for (int loop_line : {4, 6}) {
    json inserted = setIterations(10 + loop_line, loop_line);
    EXPECT_EQ(inserted["newText"], "  // perfhat: iterations=50\n") << loop_line;
    EXPECT_EQ(inserted["range"]["start"], (json{{"line", loop_line}, {"character", 0}}));
    EXPECT_EQ(inserted["range"]["end"], (json{{"line", loop_line}, {"character", 0}}));
  }
}

TEST_F(LspServerTest, ShutdownThenExit) {
  start();
  send(2, "shutdown", nullptr);
  EXPECT_TRUE(sink_.reply(2));
  send(3, "textDocument/codeLens", {{"textDocument", {{"uri", uri_}}}});
  EXPECT_EQ(errorCode(sink_.reply(3)), lsp::kInvalidRequest);
  notify("exit", nullptr);
  EXPECT_TRUE(server_->exited());
  EXPECT_EQ(server_->exitCode(), 0);
}

// The collection budget view end to end in the server: advertised, a lens on a function the
// library's status lists, the command re-solving the plan at once and writing the pins file.
TEST_F(LspServerTest, CollectionBudgetLensAndCommandReplanAndWriteThePin) {
  const std::string dir = "/tmp/perfhat-budget-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/status.json") << R"js({"budget_share":0.001,"mode":"rates",
    "detect_ns":4,"report_ns":1000,"allowed_cpu_per_s":0.001,"process_cpu_per_s":1,
    "predicted_overhead":0.001,"classes":[
      {"name":"lib","frequency_hz":900,"duty_ratio":0.1,"traced":true,"fraction":1},
      {"name":"app","frequency_hz":300,"duty_ratio":0.05,"fraction":0.317,"overhead":1e-4}],
    "functions":[{"function":"app::f","class":"app"}]})js";
  start(json{{"budgetStatus", dir + "/status.json"}, {"budgetPins", dir + "/pins"}});
  EXPECT_THAT((*sink_.reply(1))["result"]["capabilities"]["executeCommandProvider"]["commands"]
                  .get<std::vector<std::string>>(),
              ::testing::Contains("perfhat.collectionBudget"));
  open("int f();\n");
  auto lens = lensRequest(2);
  json budget_lens;
  for (const auto& l : lens["result"])
    if (l["command"]["command"] == "perfhat.collectionBudget") budget_lens = l;
  ASSERT_FALSE(budget_lens.is_null()) << lens.dump();
  EXPECT_THAT(budget_lens["command"]["title"].get<std::string>(),
              ::testing::HasSubstr("app sampled at 31.7 %"));
  send(3, "workspace/executeCommand",
       {{"command", "perfhat.collectionBudget"},
        {"arguments", budget_lens["command"]["arguments"]}});
  auto r = sink_.reply(3);
  ASSERT_TRUE(r && r->contains("result")) << r->dump();
  EXPECT_EQ((*r)["result"]["plan"]["classes"][1]["traced"], true);
  auto shown = sink_.waitFor([](const json& m) {
    return m.value("method", "") == "window/showMessage" &&
           m["params"]["message"].get<std::string>().find("Always trace app::f") !=
               std::string::npos;
  });
  ASSERT_TRUE(shown);
  std::ifstream in(dir + "/pins");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_THAT(text, ::testing::HasSubstr("always app::f\n"));
  send(4, "workspace/executeCommand",
       {{"command", "perfhat.collectionBudget"}, {"arguments", {"app::missing"}}});
  EXPECT_EQ(errorCode(sink_.reply(4)), lsp::kInvalidParams);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace perfhat::server
