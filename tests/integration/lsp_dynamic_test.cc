// Production's call graph in the editor end to end (issue #24): a real perfhat-handler fed OTLP
// spans of a call chain main_loop → root → leaf (and of `unused`, two hours before the window),
// the real perfhat-lsp over pipes. The code lens, the callers/callees hover with links, the
// never-called diagnostic and perfhat.showCallGraph must all come from the handler's
// /v1/dynamic answers; a handler that is down must cost the lenses, never an error.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "tests/integration/handler_process.h"
#include "tests/integration/handler_test_util.h"
#include "tests/integration/lsp_client.h"

namespace perfhat::testing {
namespace {

constexpr const char* kSource = R"src(namespace demo {
int leaf(int x) { return x + 1; }
int unused(int x) { return x * 2; }
int root(int n) {
  int s = 0;
  s += leaf(n);
  return s;
}
}  // namespace demo
)src";
constexpr const char* kOther = R"src(namespace demo {
int root(int n);
void main_loop() {
  root(1);
}
}  // namespace demo
)src";
constexpr int kLeafLine = 1, kUnusedLine = 2, kRootLine = 3;  // 0-based
constexpr uint64_t kMinute = 60'000'000'000ULL;

json pos(int line, int character) { return {{"line", line}, {"character", character}}; }

// `n` chains main_loop → root → leaf starting at `start_ns`, and `unused` calls at `unused_ns`.
otlp::ExportRequest chains(uint64_t start_ns, int n, const std::string& other_path,
                           const std::string& app_path, uint64_t seed) {
  otlp::ExportRequest r;
  r.resources.push_back({{"service.name", "demo"}, {"service.version", "1"}});
  std::mt19937_64 rng(seed);
  auto id = [&](size_t bytes) {
    std::string s(bytes, '\0');
    for (auto& c : s) c = static_cast<char>(rng());
    s[0] = 1;
    return s;
  };
  auto span = [&](const std::string& trace, const std::string& parent, const char* fn,
                  const std::string& file, int64_t line, uint64_t start, uint64_t dur) {
    otlp::Span s;
    s.trace_id = trace;
    s.span_id = id(8);
    s.parent_span_id = parent;
    s.name = fn;
    s.start_unix_nano = start;
    s.end_unix_nano = start + dur;
    s.attributes = {{"code.function.name", std::string(fn)},
                    {"code.file.path", file},
                    {"code.line.number", line}};
    r.spans.push_back(s);
    return r.spans.back().span_id;
  };
  for (int i = 0; i < n; ++i) {
    const std::string trace = id(16);
    const uint64_t t = start_ns + static_cast<uint64_t>(i) * 1'000'000;
    const std::string m = span(trace, "", "demo::main_loop()", other_path, 3, t, 900'000);
    const std::string root = span(trace, m, "demo::root(int)", app_path, 4, t + 10'000, 600'000);
    span(trace, root, "demo::leaf(int)", app_path, 2, t + 20'000, 200'000);
  }
  return r;
}

otlp::ExportRequest unusedCalls(uint64_t at_ns, const std::string& app_path) {
  otlp::ExportRequest r = spansFor("demo::unused(int)", {50'000, 60'000}, 7, "demo", "1");
  for (auto& s : r.spans) {
    s.end_unix_nano = at_ns + (s.end_unix_nano - s.start_unix_nano);
    s.start_unix_nano = at_ns;
    for (auto& [name, value] : s.attributes) {
      if (name == "code.file.path") value = app_path;
    }
  }
  return r;
}

class LspDynamic : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("XDG_CACHE_HOME", (dir_ / "cache").c_str(), 1);  // where call graphs are written
    app_ = dir_ / "app.cc";
    other_ = dir_ / "other.cc";
    std::ofstream(app_) << kSource;
    std::ofstream(other_) << kOther;
    std::ofstream(dir_ / "compile_commands.json")
        << json::array({{{"directory", dir_.path().string()},
                         {"file", app_},
                         {"command", "c++ -std=c++20 -c app.cc"}}})
               .dump();
  }

  std::unique_ptr<LspProcess> startLsp(const std::string& handler_url) {
    auto p = std::make_unique<LspProcess>(
        PERFHAT_LSP_BIN, std::vector<std::string>{"--handler", handler_url}, dir_ / "server.log");
    auto init =
        p->call("initialize",
                {{"processId", getpid()},
                 {"rootUri", "file://" + dir_.path().string()},
                 {"capabilities",
                  {{"textDocument", {{"codeLens", json::object()}, {"hover", json::object()}}},
                   {"window", {{"showDocument", {{"support", true}}}}}}}});
    EXPECT_TRUE(init && init->contains("result")) << (init ? init->dump() : "no reply");
    commands_ = (*init)["result"]["capabilities"]["executeCommandProvider"]["commands"];
    p->notify("initialized", json::object());
    p->notify("textDocument/didOpen",
              {{"textDocument",
                {{"uri", uri()}, {"languageId", "cpp"}, {"version", 1}, {"text", kSource}}}});
    return p;
  }
  std::string uri() const { return "file://" + app_; }
  std::string serverLog() const {
    std::ifstream in(dir_ / "server.log");
    return "\nserver log:\n" + std::string(std::istreambuf_iterator<char>(in), {});
  }
  json result(LspProcess& p, const std::string& method, json params) {
    auto r = p.call(method, std::move(params));
    EXPECT_TRUE(r && r->contains("result")) << (r ? r->dump() : "no reply") << serverLog();
    return r && r->contains("result") ? (*r)["result"] : json();
  }
  // The call-graph lens on `line`, or null.
  json graphLens(LspProcess& p, int line) {
    for (const auto& l : result(p, "textDocument/codeLens", {{"textDocument", {{"uri", uri()}}}})) {
      if (l["range"]["start"]["line"] == line && l["command"]["command"] == "perfhat.showCallGraph")
        return l;
    }
    return nullptr;
  }

  TempDir dir_{"dynamic"};
  std::string app_, other_;
  json commands_;
};

TEST_F(LspDynamic, LensHoverNeverCalledAndCallGraphFromARealHandler) {
  // A one-hour read window; data from its first minutes to now, so it covers the window.
  HandlerProcess handler({"--mode", "deployed", "--allow-unauthenticated", "--store",
                          dir_ / "h.sqlite", "--range-hours", "1"});
  httplib::Client c = client(handler.url());
  const uint64_t now = nowNs();
  for (const auto& req :
       {chains(now - 59 * kMinute, 10, other_, app_, 1), chains(now - kMinute, 20, other_, app_, 2),
        unusedCalls(now - 120 * kMinute, app_)}) {
    auto res = c.Post("/v1/traces", otlp::encodeJson(req), "application/json");
    ASSERT_TRUE(res && res->status == 200) << (res ? res->body : "no response");
  }
  // Wait (bounded) for the write-behind flush.
  bool ready = false;
  for (int i = 0; i < 300 && !ready; ++i) {
    auto r = c.Get("/v1/dynamic?key=demo%3A%3Aroot%28int%29");
    ready = r && r->status == 200 && json::parse(r->body)["visits"] == 30;
    if (!ready) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(ready) << "the handler never answered 30 visits of root";

  auto lsp = startLsp(handler.url());
  EXPECT_NE(std::find(commands_.begin(), commands_.end(), "perfhat.showCallGraph"), commands_.end())
      << commands_.dump();

  // Lens: root has 30 calls over the covered hour, one caller and one callee, and a rank. The
  // first build may show the cache while the first fetch is in flight: wait (bounded).
  json lens;
  for (int i = 0; i < 100 && !lens.is_object(); ++i) {
    lens = graphLens(*lsp, kRootLine);
    if (!lens.is_object()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(lens.is_object()) << serverLog();
  const std::string title = lens["command"]["title"];
  EXPECT_NE(title.find(" calls/h · self p50 "), std::string::npos) << title;
  EXPECT_NE(title.find(" · demand #"), std::string::npos) << title;
  EXPECT_NE(title.find("1 caller / 1 callee"), std::string::npos) << title;
  EXPECT_EQ(lens["command"]["arguments"], json::array({"demo::root(int)"}));
  EXPECT_TRUE(graphLens(*lsp, kLeafLine).is_object());
  EXPECT_TRUE(graphLens(*lsp, kUnusedLine).is_null());  // no call in the window: no lens

  // Hover on root's name: the caller is defined in other.cc (a workspace file the runtime
  // reported; its location arrives with a background fetch), the callee in this document.
  const std::string caller_link = "[`demo::main_loop()`](file://" + other_ + "#L3) — 30 calls";
  std::string md;
  for (int i = 0; i < 100 && md.find(caller_link) == std::string::npos; ++i) {
    if (i > 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const json hover =
        result(*lsp, "textDocument/hover",
               {{"textDocument", {{"uri", uri()}}}, {"position", pos(kRootLine, 5)}});
    md = hover["contents"]["value"];
  }
  EXPECT_NE(md.find("**Callers** (1)"), std::string::npos) << md;
  EXPECT_NE(md.find(caller_link), std::string::npos) << md << serverLog();
  EXPECT_NE(md.find("[`demo::leaf(int)`](file://" + app_ + "#L2) — 30 calls"), std::string::npos)
      << md;

  // Never called: unused, probed (it has rows two hours ago), with data covering the window.
  size_t cursor = 0;
  auto diags = lsp->waitFor(
      [&](const json& m) {
        return m.value("method", "") == "textDocument/publishDiagnostics" &&
               m["params"]["uri"] == uri();
      },
      std::chrono::seconds(60), &cursor);
  ASSERT_TRUE(diags) << serverLog();
  std::vector<int> never;
  for (const auto& d : (*diags)["params"]["diagnostics"]) {
    if (d.value("code", "") == "perfhat.never-called") {
      never.push_back(d["range"]["start"]["line"]);
      EXPECT_EQ(d["severity"], 3) << d.dump();
    }
  }
  EXPECT_EQ(never, std::vector<int>{kUnusedLine}) << (*diags).dump();

  // The command: SVG from Graphviz, written to a file the client is asked to show.
  size_t show_cursor = lsp->messageCount();
  const json graph = result(
      *lsp, "workspace/executeCommand",
      {{"command", "perfhat.showCallGraph"}, {"arguments", json::array({"demo::root(int)"})}});
  ASSERT_TRUE(graph.is_object()) << graph.dump();
  const std::string path = graph["path"];
  std::ifstream in(path);
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  if (graph["format"] == "svg") {
    EXPECT_NE(text.find("<svg"), std::string::npos);
    EXPECT_NE(text.find("demo::main_loop()"), std::string::npos) << text.substr(0, 400);
  } else {  // no Graphviz on this machine: the dot text
    EXPECT_NE(text.find("digraph"), std::string::npos) << text;
  }
  EXPECT_EQ(path.rfind(dir_ / "cache", 0), 0u) << path;
  auto show =
      lsp->waitFor([](const json& m) { return m.value("method", "") == "window/showDocument"; },
                   std::chrono::seconds(10), &show_cursor);
  ASSERT_TRUE(show);
  EXPECT_EQ((*show)["params"]["uri"], "file://" + path);
  EXPECT_EQ(lsp->shutdownAndWait(), 0);
}

TEST_F(LspDynamic, AHandlerThatIsDownCostsTheLensesNotAnError) {
  int port = 0;
  {
    HandlerProcess gone(
        {"--mode", "deployed", "--allow-unauthenticated", "--store", dir_ / "gone.sqlite"});
    port = std::stoi(gone.url().substr(gone.url().rfind(':') + 1));
  }
  auto lsp = startLsp("http://127.0.0.1:" + std::to_string(port));
  EXPECT_TRUE(graphLens(*lsp, kRootLine).is_null()) << serverLog();
  const json hover = result(*lsp, "textDocument/hover",
                            {{"textDocument", {{"uri", uri()}}}, {"position", pos(kRootLine, 5)}});
  EXPECT_EQ(hover.dump().find("Callers"), std::string::npos) << hover.dump();
  auto r = lsp->call("workspace/executeCommand", {{"command", "perfhat.showCallGraph"},
                                                  {"arguments", json::array({"demo::root(int)"})}});
  ASSERT_TRUE(r && r->contains("error")) << (r ? r->dump() : "no reply");
  EXPECT_EQ(lsp->shutdownAndWait(), 0);
}

}  // namespace
}  // namespace perfhat::testing
