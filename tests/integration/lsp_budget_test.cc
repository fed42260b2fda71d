// The collection-budget view reads the handler (issue #22): a real perfhat-handler holding a
// service's status as libperfhat POSTs it (/v1/budget), the real perfhat-lsp over pipes. The
// "always trace" lens and perfhat.collectionBudget come from the handler, with the stack samples'
// estimates; the local status file is used when the handler has none (404: no error) or when
// the file is newer; the pin is written to the pins file the library re-reads.
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

constexpr const char* kSource = "namespace app {\nint f() { return 1; }\n}  // namespace app\n";

// A status as the library sends it: `app` is covered by stack samples (probing mode), `lib`
// traced; `predicted` tells the statuses apart.
json status(double predicted, bool with_labels) {
  json j = {{"budget_share", 0.001},
            {"mode", "probing"},
            {"detect_ns", 4},
            {"report_ns", 1000},
            {"allowed_cpu_per_s", 0.001},
            {"process_cpu_per_s", 1},
            {"max_probe_hz", 1000},
            {"min_fraction", 0.001},
            {"probing_hz", 100},
            {"predicted_overhead", predicted},
            {"measured_overhead", 0.0009},
            {"window_s", 10},
            {"sampling_wall_s", 20},
            {"classes",
             {{{"name", "lib"},
               {"frequency_hz", 400},
               {"duty_ratio", 0.1},
               {"weight", 1},
               {"traced", true},
               {"fraction", 1},
               {"overhead", 0.0004}},
              {{"name", "app"},
               {"frequency_hz", 300},
               {"duty_ratio", 0.05},
               {"weight", 1},
               {"traced", false},
               {"fraction", 0},
               {"overhead", 0}}}},
            {"sampled_functions",
             {{{"function", "app::f()"},
               {"samples", 40},
               {"self", 30},
               {"estimated_cpu_s", 0.4},
               {"estimated_self_cpu_s", 0.3}}}},
            {"functions", {{{"function", "app::f"}, {"class", "app"}}}}};
  if (with_labels) {
    j["service"] = "shop";
    j["version"] = "1";
    j["instance"] = "h/1";
  }
  return j;
}

class LspBudget : public ::testing::Test {
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
  std::unique_ptr<LspProcess> startLsp(const std::string& handler_url, json options) {
    auto p = std::make_unique<LspProcess>(
        PERFHAT_LSP_BIN, std::vector<std::string>{"--handler", handler_url}, dir_ / "server.log");
    auto init = p->call("initialize",
                        {{"processId", getpid()},
                         {"rootUri", "file://" + dir_.path().string()},
                         {"initializationOptions", std::move(options)},
                         {"capabilities", {{"textDocument", {{"codeLens", json::object()}}}}}});
    EXPECT_TRUE(init && init->contains("result")) << (init ? init->dump() : "no reply");
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
  // The collection-budget lens, or null.
  json budgetLens(LspProcess& p) {
    auto r = p.call("textDocument/codeLens", {{"textDocument", {{"uri", uri()}}}});
    if (!r || !r->contains("result")) return nullptr;
    for (const auto& l : (*r)["result"]) {
      if (l["command"]["command"] == "perfhat.collectionBudget") return l;
    }
    return nullptr;
  }
  // perfhat.collectionBudget's result for `args`, or its error.
  json command(LspProcess& p, json args) {
    auto r = p.call("workspace/executeCommand",
                    {{"command", "perfhat.collectionBudget"}, {"arguments", std::move(args)}});
    EXPECT_TRUE(r) << serverLog();
    return r ? *r : json();
  }
  // Waits (bounded) until the view's status comes from `from` (the handler's answers are reused
  // for a second).
  json viewFrom(LspProcess& p, const std::string& from) {
    json r;
    for (int i = 0; i < 50; ++i) {
      r = command(p, json::array());
      if (r.contains("result") && r["result"]["from"].get<std::string>().rfind(from, 0) == 0) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return r;
  }

  TempDir dir_{"lsp-budget"};
  std::string app_;
};

TEST_F(LspBudget, LensAndViewFromTheHandlerWithEstimatesAndThePinWritten) {
  HandlerProcess handler(
      {"--mode", "deployed", "--allow-unauthenticated", "--store", dir_ / "h.sqlite"});
  httplib::Client c = client(handler.url());
  auto posted = c.Post("/v1/budget", status(0.0005, true).dump(), "application/json");
  ASSERT_TRUE(posted && posted->status == 200) << (posted ? posted->body : "no response");
  const std::string pins = dir_ / "pins";
  auto lsp = startLsp(handler.url(), {{"budgetService", "shop"}, {"budgetPins", pins}});

  json lens;
  for (int i = 0; i < 100 && !lens.is_object(); ++i) {
    lens = budgetLens(*lsp);
    if (!lens.is_object()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(lens.is_object()) << serverLog();
  const std::string title = lens["command"]["title"];
  EXPECT_NE(title.find("collection budget: app sampled at 0 %"), std::string::npos) << title;
  // 0.4 s of CPU over 20 s of sampling.
  EXPECT_NE(title.find("≈ 20 ms CPU/s estimated from stack samples — always trace"),
            std::string::npos)
      << title;

  const json view = command(*lsp, json::array());
  ASSERT_TRUE(view.contains("result")) << view.dump() << serverLog();
  EXPECT_EQ(view["result"]["from"], "handler " + handler.url());
  EXPECT_DOUBLE_EQ(view["result"]["plan"]["predicted_overhead"].get<double>(), 0.0005);
  const json& sampled = view["result"]["sampled_functions"][0];
  EXPECT_EQ(sampled["function"], "app::f()");
  EXPECT_EQ(sampled["estimated"], "from stack samples");
  EXPECT_DOUBLE_EQ(sampled["cpu_per_s"].get<double>(), 0.02);

  const json pinned = command(*lsp, lens["command"]["arguments"]);
  ASSERT_TRUE(pinned.contains("result")) << pinned.dump() << serverLog();
  EXPECT_EQ(pinned["result"]["plan"]["classes"][1]["traced"], true);
  EXPECT_GT(pinned["result"]["plan"]["predicted_overhead"].get<double>(), 0.0005);
  EXPECT_EQ(pinned["result"]["pin"], "always app::f");
  std::ifstream in(pins);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("always app::f\n"), std::string::npos) << text;
  lsp->shutdownAndWait();
}

TEST_F(LspBudget, TheFileServesWhenTheHandlerHasNoneOrIsOlder) {
  HandlerProcess handler(
      {"--mode", "deployed", "--allow-unauthenticated", "--store", dir_ / "h.sqlite"});
  const std::string file = dir_ / "status.json";
  std::ofstream(file) << status(0.0007, false).dump();
  auto lsp = startLsp(handler.url(), {{"budgetService", "shop"}, {"budgetStatus", file}});

  // The handler has no status of "shop" (404): the file's, and no error shown.
  json r = viewFrom(*lsp, "file ");
  ASSERT_TRUE(r.contains("result")) << r.dump() << serverLog();
  EXPECT_DOUBLE_EQ(r["result"]["plan"]["predicted_overhead"].get<double>(), 0.0007);
  for (const json& m : lsp->messages()) {
    if (m.value("method", "") != "window/showMessage") continue;
    EXPECT_EQ(m["params"]["message"].get<std::string>().find("budget"), std::string::npos)
        << m.dump();
  }

  // The library sends a newer one: the handler's.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // past the file's mtime
  httplib::Client c = client(handler.url());
  ASSERT_EQ(c.Post("/v1/budget", status(0.0003, true).dump(), "application/json")->status, 200);
  r = viewFrom(*lsp, "handler ");
  ASSERT_TRUE(r.contains("result")) << r.dump() << serverLog();
  EXPECT_DOUBLE_EQ(r["result"]["plan"]["predicted_overhead"].get<double>(), 0.0003);

  // A status file written after it (the service beside the editor): the file's again.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::ofstream(file) << status(0.0009, false).dump();
  r = viewFrom(*lsp, "file ");
  ASSERT_TRUE(r.contains("result")) << r.dump() << serverLog();
  EXPECT_DOUBLE_EQ(r["result"]["plan"]["predicted_overhead"].get<double>(), 0.0009);
  lsp->shutdownAndWait();
}

// A handler from before /v1/budget answers "no such endpoint": the file, and no error.
TEST_F(LspBudget, AHandlerWithoutTheRouteLeavesTheFile) {
  httplib::Server old;
  old.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    res.set_content(json{{"error",
                          {{"code", "not_found"},
                           {"message", "no such endpoint: " + req.method + " " + req.path}}}}
                        .dump(),
                    "application/json");
  });
  const int port = old.bind_to_any_port("127.0.0.1");
  std::thread serving([&] { old.listen_after_bind(); });
  const std::string file = dir_ / "status.json";
  std::ofstream(file) << status(0.0007, false).dump();
  auto lsp = startLsp("http://127.0.0.1:" + std::to_string(port), {{"budgetStatus", file}});
  const json r = command(*lsp, json::array());
  ASSERT_TRUE(r.contains("result")) << r.dump() << serverLog();
  EXPECT_EQ(r["result"]["from"], "file " + file);
  EXPECT_DOUBLE_EQ(r["result"]["plan"]["predicted_overhead"].get<double>(), 0.0007);
  lsp->shutdownAndWait();
  old.stop();
  serving.join();
}

}  // namespace
}  // namespace perfhat::testing
