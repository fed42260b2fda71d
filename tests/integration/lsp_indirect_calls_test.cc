// Calls through a function pointer end to end (issue #18): a real perfhat-handler fed OTLP spans
// in which apply() ran fast() and slow() (through its pointer parameter) and twice() (as
// written), the real perfhat-lsp over pipes asking the handler for what ran from apply(). The
// hover of `h(x)` lists the two implementations and the call costs their call sites; with no
// such data the call stays unknown and --check warns about nothing.
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

constexpr const char* kSource = R"src(namespace app {
using Handler = int (*)(int);
int twice(int x) { return 2 * x; }
int apply(Handler h, int x) {
  return h(x) + twice(x);
}
}  // namespace app
)src";
constexpr int kCallLine = 4, kCallColumn = 9;  // `h(x)`, 0-based
constexpr const char* kApply = "app::apply(int (*)(int), int)";

json pos(int line, int character) { return {{"line", line}, {"character", character}}; }

// `n` calls of apply(), each calling twice() and (with `targets`) fast() 20 µs or, one in four,
// slow() 200 µs.
otlp::ExportRequest applyCalls(int n, uint64_t seed, bool targets = true) {
  otlp::ExportRequest r;
  r.resources.push_back({{"service.name", "app"}, {"service.version", "1"}});
  std::mt19937_64 rng(seed);
  auto id = [&](size_t bytes) {
    std::string s(bytes, '\0');
    for (auto& c : s) c = static_cast<char>(rng());
    s[0] = 1;
    return s;
  };
  auto span = [&](const std::string& trace, const std::string& parent, const std::string& fn,
                  uint64_t start, uint64_t dur) {
    otlp::Span s;
    s.trace_id = trace;
    s.span_id = id(8);
    s.parent_span_id = parent;
    s.name = fn;
    s.start_unix_nano = start;
    s.end_unix_nano = start + dur;
    s.attributes = {{"code.function.name", fn}};
    r.spans.push_back(s);
    return r.spans.back().span_id;
  };
  const uint64_t t0 = nowNs() - 30'000'000'000ULL;
  for (int i = 0; i < n; ++i) {
    const std::string trace = id(16);
    const uint64_t t = t0 + static_cast<uint64_t>(i) * 1'000'000;
    const bool slow = i % 4 == 0;
    const std::string root = span(trace, "", kApply, t, slow ? 250'000 : 70'000);
    if (targets)
      span(trace, root, slow ? "app::slow(int)" : "app::fast(int)", t + 1'000,
           slow ? 200'000 : 20'000);
    span(trace, root, "app::twice(int)", t + 240'000, 1'000);
  }
  return r;
}

class LspIndirectCalls : public ::testing::Test {
 protected:
  void SetUp() override {
    app_ = dir_ / "app.cc";
    std::ofstream(app_) << kSource;
    std::ofstream(dir_ / "compile_commands.json")
        << json::array({{{"directory", dir_.path().string()},
                         {"file", app_},
                         {"command", "c++ -std=c++20 -c app.cc"}}})
               .dump();
  }
  void feed(HandlerProcess& handler, const otlp::ExportRequest& req, const std::string& key,
            uint64_t calls) {
    httplib::Client c = client(handler.url());
    auto res = c.Post("/v1/traces", otlp::encodeJson(req), "application/json");
    ASSERT_TRUE(res && res->status == 200) << (res ? res->body : "no response");
    bool ready = false;  // the write-behind flush, bounded
    for (int i = 0; i < 300 && !ready; ++i) {
      BatchGetResponse r = batchGet(c, {key});
      ready = !r.items.empty() && r.items[0].stats && r.items[0].stats->count == calls;
      if (!ready) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ASSERT_TRUE(ready) << "the handler never stored " << key;
  }
  std::string hoverAtCall(const std::string& handler_url) {
    LspProcess p(PERFHAT_LSP_BIN, {"--handler", handler_url}, dir_ / "server.log");
    auto init =
        p.call("initialize", {{"processId", getpid()},
                              {"rootUri", "file://" + dir_.path().string()},
                              {"capabilities", {{"textDocument", {{"hover", json::object()}}}}}});
    EXPECT_TRUE(init && init->contains("result")) << (init ? init->dump() : "no reply");
    p.notify("initialized", json::object());
    p.notify(
        "textDocument/didOpen",
        {{"textDocument",
          {{"uri", "file://" + app_}, {"languageId", "cpp"}, {"version", 1}, {"text", kSource}}}});
    // The first build may answer from the cache while the fetch is in flight: wait (bounded).
    std::string md;
    for (int i = 0; i < 100; ++i) {
      if (i > 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      auto r = p.call("textDocument/hover", {{"textDocument", {{"uri", "file://" + app_}}},
                                             {"position", pos(kCallLine, kCallColumn)}});
      md = r && r->contains("result") && (*r)["result"].is_object()
               ? (*r)["result"]["contents"]["value"].get<std::string>()
               : std::string();
      if (md.find("implementations") != std::string::npos) break;
    }
    EXPECT_EQ(p.shutdownAndWait(), 0);
    return md;
  }
  std::string serverLog() const {
    std::ifstream in(dir_ / "server.log");
    return "\nserver log:\n" + std::string(std::istreambuf_iterator<char>(in), {});
  }
  std::string check(const std::string& handler_url) {
    const std::string out = dir_ / "check.out";
    const std::string cmd = std::string(PERFHAT_LSP_BIN) + " --check " + app_ + " --handler " +
                            handler_url + " --no-color > " + out + " 2>>" + dir_ / "server.log";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << serverLog();
    std::ifstream in(out);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  TempDir dir_{"indirect"};
  std::string app_;
};

TEST_F(LspIndirectCalls, TheHoverListsWhatRanThroughThePointerAndItsCost) {
  HandlerProcess handler(
      {"--mode", "deployed", "--allow-unauthenticated", "--store", dir_ / "h.sqlite"});
  feed(handler, applyCalls(40, 1), kApply, 40);
  const std::string md = hoverAtCall(handler.url());
  EXPECT_NE(md.find("| implementations (overall) | calls | mean |"), std::string::npos)
      << md << serverLog();
  EXPECT_NE(md.find("`app::fast(int)` | 30 |"), std::string::npos) << md;
  EXPECT_NE(md.find("`app::slow(int)` | 10 |"), std::string::npos) << md;
  EXPECT_EQ(md.find("app::twice"), std::string::npos) << "called as written: not a target\n" << md;
  // 30 × 20 µs and 10 × 200 µs from apply(): 65 µs per call.
  EXPECT_NE(md.find("65"), std::string::npos) << md;
}

TEST_F(LspIndirectCalls, WithoutDataFromItsFunctionTheCallStaysUnknownAndNothingWarns) {
  HandlerProcess handler(
      {"--mode", "deployed", "--allow-unauthenticated", "--store", dir_ / "h.sqlite"});
  feed(handler, applyCalls(8, 2, /*targets=*/false), kApply, 8);  // apply() and twice() only
  const std::string text = check(handler.url());
  EXPECT_NE(text.find("int apply(Handler h, int x)"), std::string::npos) << text;
  EXPECT_EQ(text.find("regression"), std::string::npos) << text;
  EXPECT_EQ(text.find("possibly new"), std::string::npos) << text;
  const std::string md = hoverAtCall(handler.url());
  EXPECT_EQ(md.find("implementations"), std::string::npos) << md;
  EXPECT_EQ(md.find(" 0 ns"), std::string::npos) << md;
}

}  // namespace
}  // namespace perfhat::testing
