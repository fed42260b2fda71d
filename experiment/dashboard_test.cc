// The control group's dashboard against a real perfhat-handler process (loopback HTTP, SQLite):
// the JSON it serves, and the page rendered by headless Chromium.
#include "experiment/dashboard_server.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <thread>

#include "tests/integration/handler_process.h"
#include "tests/integration/handler_test_util.h"

namespace perfhat::experiment {
namespace {

using nlohmann::json;
using perfhat::testing::HandlerProcess;
using perfhat::testing::TempDir;

constexpr const char* kToken = "dash-token";
const std::string kSlow = "agile::BacklogService::descendantStories(int) const";
const std::string kLazy = "agile::Task::effortSpent() const";
const std::string kCheap = "agile::StoryService::moveStory(int, int, const std::string &) const";

// Calls of `key` with the given latencies, all starting `minutes_ago` minutes before now.
void ingest(httplib::Client& c, const std::string& key, const std::vector<double>& ms,
            int minutes_ago, uint64_t seed) {
  std::vector<double> ns;
  for (double m : ms) ns.push_back(m * 1e6);
  auto req = perfhat::testing::spansFor(key, ns, seed);
  const uint64_t start =
      perfhat::testing::nowNs() - uint64_t(minutes_ago) * 60'000'000'000ULL - 10'000'000'000ULL;
  for (size_t i = 0; i < req.spans.size(); ++i) {
    req.spans[i].start_unix_nano = start;
    req.spans[i].end_unix_nano = start + static_cast<uint64_t>(ns[i]);
  }
  auto res = c.Post("/v1/traces", otlp::encodeJson(req), "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
}

class Dashboard : public ::testing::Test {
 protected:
  Dashboard()
      : dir_("dashboard"),
        handler_({"--mode", "deployed", "--store", dir_ / "d.sqlite", "--token", kToken}),
        reader_(handler_.url(), kToken),
        server_(reader_) {
    port_ = server_.bind("127.0.0.1", 0);
    thread_ = std::thread([this] { server_.run(); });
  }
  ~Dashboard() override {
    server_.stop();
    thread_.join();
  }
  void SetUp() override {
    auto c = perfhat::testing::client(handler_.url(), kToken);
    ingest(c, kSlow, {40, 50, 60}, 6, 1);  // mean 50 ms, six minutes ago
    ingest(c, kSlow, {90, 110}, 2, 2);     // mean 100 ms, two minutes ago
    ingest(c, kLazy, {1.5, 2.5}, 2, 3);
    ingest(c, kCheap, {0.25, 0.75}, 1, 4);
  }
  json get(const std::string& path, int expect_status = 200) {
    httplib::Client c("127.0.0.1", port_);
    auto res = c.Get(path);
    EXPECT_TRUE(res);
    if (!res) return {};
    EXPECT_EQ(res->status, expect_status) << res->body;
    return json::parse(res->body);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/"; }

  TempDir dir_;
  HandlerProcess handler_;
  HandlerReader reader_;
  DashboardServer server_;
  int port_ = 0;
  std::thread thread_;
};

TEST_F(Dashboard, FunctionsTableHasEveryKeyWithItsAverageSlowestFirst) {
  const json j = get("/api/functions?minutes=60");
  ASSERT_EQ(j["functions"].size(), 3u) << j.dump();
  EXPECT_EQ(j["functions"][0]["key"], kSlow);
  EXPECT_EQ(j["functions"][0]["count"], 5);
  EXPECT_NEAR(j["functions"][0]["mean_ms"].get<double>(), 70.0, 1e-6);  // (150 + 200) / 5
  EXPECT_EQ(j["functions"][1]["key"], kLazy);
  EXPECT_NEAR(j["functions"][1]["mean_ms"].get<double>(), 2.0, 1e-6);
  EXPECT_EQ(j["functions"][2]["key"], kCheap);
  EXPECT_NEAR(j["functions"][2]["mean_ms"].get<double>(), 0.5, 1e-6);
  // The window is given back in RFC 3339 (second precision, UTC).
  EXPECT_EQ(get("/api/functions?minutes=60")["window"]["to"].get<std::string>().size(), 20u);
}

TEST_F(Dashboard, SeriesSplitsTheWindowIntoBuckets) {
  const json j =
      get("/api/series?minutes=10&buckets=10&key=" + httplib::detail::encode_query_param(kSlow));
  ASSERT_EQ(j["series"].size(), 10u);
  int calls = 0, with_data = 0;
  for (const auto& p : j["series"]) {
    calls += p["count"].get<int>();
    if (!p["mean_ms"].is_null()) {
      ++with_data;
      const double m = p["mean_ms"].get<double>();
      EXPECT_TRUE(std::fabs(m - 50) < 1e-6 || std::fabs(m - 100) < 1e-6) << p.dump();
    }
  }
  EXPECT_EQ(calls, 5);
  EXPECT_EQ(with_data, 2);  // the two minutes with calls, 4 minutes apart
}

TEST_F(Dashboard, BadParametersAndAnUnreachableHandlerAreJsonErrors) {
  EXPECT_EQ(get("/api/functions?minutes=-5", 400)["error"]["code"], "invalid_argument");
  EXPECT_EQ(get("/api/series?minutes=5", 400)["error"]["code"], "invalid_argument");
  HandlerReader nowhere("http://127.0.0.1:1", "");
  EXPECT_THROW(nowhere.functions(0, 60), std::runtime_error);
  HandlerReader wrong_token(handler_.url(), "not-the-token");
  EXPECT_THROW(wrong_token.keys(), std::runtime_error);
}

// The page in a real browser: the table fills from /api/functions, the search narrows it (q=),
// and the chart draws the selected function's points.
TEST_F(Dashboard, PageRendersInHeadlessChromium) {
  const char* chromium = std::getenv("PERFHAT_CHROMIUM");
  const std::string bin = chromium ? chromium : "/usr/bin/chromium";
  if (!std::filesystem::exists(bin)) GTEST_SKIP() << "no Chromium at " << bin;
  TempDir profile("chromium");
  const std::string cmd =
      bin + " --headless --no-sandbox --disable-gpu --user-data-dir=" + profile.path().string() +
      " --virtual-time-budget=15000 --dump-dom '" + url() + "?minutes=60&q=EFFORT' 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string dom;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) dom.append(buf, n);
  ASSERT_EQ(pclose(p), 0) << dom;
  EXPECT_NE(dom.find("<tr data-key=\"" + kLazy + "\""), std::string::npos) << dom;
  EXPECT_EQ(dom.find("<tr data-key=\"" + kCheap + "\""), std::string::npos);  // filtered out
  EXPECT_NE(dom.find("1 of 3 functions"), std::string::npos);
  // No function was picked, so the chart shows the slowest one (the first of the full list).
  EXPECT_NE(dom.find("<div id=\"chart-title\">" + kSlow + "</div>"), std::string::npos);
  EXPECT_NE(dom.find("class=\"point\""), std::string::npos);
  EXPECT_NE(dom.find("class=\"line\""), std::string::npos);
}

}  // namespace
}  // namespace perfhat::experiment
