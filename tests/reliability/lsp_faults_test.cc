// Reliability suite, the language server under a bad handler (issue #19): one scenario each for
// a handler that is down, slow (answers after perfhat-lsp stopped waiting) or returns garbage.
// The real perfhat-lsp is attached to a real handler through a fault-injecting proxy; after
// hints were shown once, the proxy turns bad, the cache is expired (perfhat.refresh) and the
// document edited. Asserted: every inlayHint request is answered, the cached value is still
// shown, marked as cached, and the user is told once. Recorded: how long those answers took.
// (The detailed LSP-under-bad-handler integration tests live with the language server's own
// tests; this keeps to what the suite's table needs.)
#include <gtest/gtest.h>
#include <unistd.h>

#include <condition_variable>
#include <fstream>
#include <regex>
#include <set>

#include "tests/integration/handler_process.h"
#include "tests/integration/handler_test_util.h"
#include "tests/integration/lsp_client.h"
#include "tests/reliability/suite.h"

namespace perfhat::reliability {
namespace {

using testing::HandlerProcess;
using testing::LspProcess;
using testing::TempDir;
using namespace std::chrono_literals;

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

enum class Fault { kNone, kDown, kSlow, kGarbage };

// Forwards every request to the real handler, or injects the fault.
class FaultProxy {
 public:
  explicit FaultProxy(std::string upstream) : upstream_(std::move(upstream)) {
    auto forward = [this](const httplib::Request& req, httplib::Response& res) {
      const Fault f = fault_.load();
      if (f == Fault::kSlow) {  // 30 s: past perfhat-lsp's fetch deadline; ended at teardown
        std::unique_lock lock(mu_);
        cv_.wait_for(lock, 30s, [this] { return stopping_; });
      }
      if (f == Fault::kGarbage) {
        res.status = 200;
        res.set_content(std::string("\x00\x01{\"items\":[{\"key\":", 18) + "]]garbage",
                        "application/json");
        return;
      }
      httplib::Client c(upstream_);
      c.set_read_timeout(45s);
      {
        std::lock_guard lock(mu_);
        if (stopping_) return;
        in_flight_.insert(&c);
      }
      struct Done {
        FaultProxy* p;
        httplib::Client* c;
        ~Done() {
          std::lock_guard lock(p->mu_);
          p->in_flight_.erase(c);
        }
      } done{this, &c};
      httplib::Headers h;
      for (const char* name : {"Authorization", "Accept-Encoding"}) {
        if (req.has_header(name)) h.emplace(name, req.get_header_value(name));
      }
      auto r = req.method == "GET"
                   ? c.Get(req.target, h)
                   : c.Post(req.target, h, req.body, req.get_header_value("Content-Type"));
      if (!r) {
        res.status = 502;
        return;
      }
      res.status = r->status;
      for (const auto& [k, v] : r->headers) {
        if (k.rfind("X-Perfhat", 0) == 0) res.set_header(k, v);
      }
      res.set_content(r->body, r->get_header_value("Content-Type"));
    };
    svr_.Get(".*", forward);
    svr_.Post(".*", forward);
    port_ = svr_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { svr_.listen_after_bind(); });
    for (int i = 0; i < 500 && !svr_.is_running(); ++i) std::this_thread::sleep_for(10ms);
  }
  ~FaultProxy() { down(); }

  void set(Fault f) {
    if (f == Fault::kDown) return down();
    fault_ = f;
  }
  // Connection refused from now on.
  void down() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
      for (httplib::Client* c : in_flight_) c->stop();  // forwarded long-polls end now
    }
    cv_.notify_all();
    svr_.stop();
    if (thread_.joinable()) thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  std::string upstream_;
  std::atomic<Fault> fault_{Fault::kNone};
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;                 // GUARDED_BY(mu_)
  std::set<httplib::Client*> in_flight_;  // GUARDED_BY(mu_)
  httplib::Server svr_;
  int port_ = 0;
  std::thread thread_;
};

json pos(int line, int character) { return {{"line", line}, {"character", character}}; }

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

class LanguageServerUnderBadHandler : public ::testing::TestWithParam<Fault> {
 protected:
  void SetUp() override {
    src_ = dir_ / "app.cc";
    std::ofstream(src_) << kSource;
    std::ofstream(dir_ / "compile_commands.json")
        << json::array({{{"directory", dir_.path().string()},
                         {"file", src_},
                         {"command", "c++ -std=c++20 -c app.cc"}}})
               .dump();
  }

  std::string uri() const { return "file://" + src_; }
  std::string serverLog() const {
    std::ifstream in(dir_ / "server.log");
    return "\nserver log:\n" + std::string(std::istreambuf_iterator<char>(in), {});
  }
  // inlayHint over the whole file; the answer (null when none came) and how long it took.
  std::pair<json, double> hints(LspProcess& lsp) {
    auto t = Clock::now();
    auto r = lsp.call("textDocument/inlayHint",
                      {{"textDocument", {{"uri", uri()}}},
                       {"range", {{"start", pos(0, 0)}, {"end", pos(100, 0)}}}},
                      60s);
    double ms = msSince(t);
    if (!r || !r->contains("result")) return {json(), ms};
    return {(*r)["result"], ms};
  }

  TempDir dir_{"rel-lsp"};
  std::string src_;
};

std::string faultName(Fault f) {
  switch (f) {
    case Fault::kDown:
      return "down";
    case Fault::kSlow:
      return "slow";
    case Fault::kGarbage:
      return "garbage";
    case Fault::kNone:
      break;
  }
  return "none";
}

TEST_P(LanguageServerUnderBadHandler, AnswersFromCacheMarkedStaleAndTellsTheUserOnce) {
  HandlerProcess handler(
      {"--mode", "deployed", "--allow-unauthenticated", "--store", dir_ / "h.sqlite"});
  {
    auto c = testing::client(handler.url());
    auto res = c.Post("/v1/traces",
                      otlp::encodeJson(testing::spansFor(kLeaf, std::vector<double>(100, 2e6), 1)),
                      "application/json");
    ASSERT_TRUE(res && res->status == 200);
    // A read waits for the write-behind checkpoint: no change event reaches the server later
    // (an invalidation drops cache entries, which is not the fault under test here).
    ASSERT_EQ(testing::batchGet(c, {kLeaf}).items.size(), 1u);
  }
  FaultProxy proxy(handler.url());
  LspProcess lsp(PERFHAT_LSP_BIN, {"--handler", proxy.url()}, dir_ / "server.log");
  auto init =
      lsp.call("initialize", {{"processId", getpid()},
                              {"rootUri", "file://" + dir_.path().string()},
                              {"capabilities",
                               {{"textDocument", {{"inlayHint", json::object()}}},
                                {"workspace", {{"inlayHint", {{"refreshSupport", true}}}}}}}});
  ASSERT_TRUE(init && init->contains("result"));
  lsp.notify("initialized", json::object());
  lsp.notify("textDocument/didOpen",
             {{"textDocument",
               {{"uri", uri()}, {"languageId", "cpp"}, {"version", 1}, {"text", kSource}}}});
  auto [fresh, fresh_ms] = hints(lsp);
  const double value = hintMs(fresh, kCallLine);
  ASSERT_GT(value, 0) << "no production hint while the handler is healthy: " << fresh.dump()
                      << serverLog();
  ASSERT_EQ(fresh.dump().find("cached"), std::string::npos) << "fresh data marked cached";
  const size_t before_fault = lsp.messageCount();

  proxy.set(GetParam());
  // The cache expires (its values stay as the fallback) and the document is re-analysed.
  const auto refresh_start = Clock::now();
  auto refresh = lsp.call("workspace/executeCommand", {{"command", "perfhat.refresh"}});
  ASSERT_TRUE(refresh && refresh->contains("result")) << (refresh ? refresh->dump() : "no reply");
  // The server re-analyses in the background and asks the editor to refresh its hints.
  size_t cursor = before_fault;
  auto asked = lsp.waitFor(
      [](const json& m) {
        return m.value("method", "") == "workspace/inlayHint/refresh" && m.contains("id");
      },
      60s, &cursor);
  ASSERT_TRUE(asked) << "no workspace/inlayHint/refresh after perfhat.refresh" << serverLog();
  const double reanalysis_ms = msSince(refresh_start);
  lsp.send({{"jsonrpc", "2.0"}, {"id", (*asked)["id"]}, {"result", nullptr}});
  auto [after_refresh, refresh_ms] = hints(lsp);
  // An edit: another analysis, another failing fetch, no second message.
  lsp.notify("textDocument/didChange",
             {{"textDocument", {{"uri", uri()}, {"version", 2}}},
              {"contentChanges", json::array({{{"text", std::string(kSource) + "// edited\n"}}})}});
  auto [after_edit, edit_ms] = hints(lsp);

  size_t messages = 0;
  for (size_t i = before_fault; i < lsp.messageCount(); ++i) {
    if (lsp.messages()[i].value("method", "") == "window/showMessage") ++messages;
  }
  const bool answered = !after_refresh.is_null() && !after_edit.is_null();
  const bool cached_shown =
      hintMs(after_refresh, kCallLine) == value && hintMs(after_edit, kCallLine) == value;
  const bool marked = after_refresh.dump().find("cached") != std::string::npos &&
                      after_edit.dump().find("cached") != std::string::npos;
  record({{"kind", "lsp"},
          {"fault", faultName(GetParam())},
          {"answered", answered},
          {"cached_value_shown", cached_shown},
          {"marked_stale", marked},
          {"messages", messages},
          {"healthy_hint_ms", fresh_ms},
          {"reanalysis_after_refresh_ms", reanalysis_ms},
          {"hint_after_refresh_ms", refresh_ms},
          {"hint_after_edit_ms", edit_ms}});
  EXPECT_TRUE(answered) << "inlayHint unanswered under a " << faultName(GetParam()) << " handler"
                        << serverLog();
  EXPECT_TRUE(cached_shown) << after_refresh.dump() << "\n" << after_edit.dump() << serverLog();
  EXPECT_TRUE(marked) << "cached values not marked: " << after_edit.dump();
  EXPECT_EQ(messages, 1u) << "the user must be told once";
  EXPECT_EQ(lsp.shutdownAndWait(), 0);
}

INSTANTIATE_TEST_SUITE_P(Faults, LanguageServerUnderBadHandler,
                         ::testing::Values(Fault::kDown, Fault::kSlow, Fault::kGarbage),
                         [](const auto& info) {
                           std::string n = faultName(info.param);
                           n[0] = static_cast<char>(std::toupper(n[0]));
                           return n;
                         });

}  // namespace
}  // namespace perfhat::reliability
