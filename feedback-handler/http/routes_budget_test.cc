// POST/GET /v1/budget on a real HandlerServer (loopback HTTP) over each store backend: a SQLite
// file, and a real PostgreSQL server (started by the first test that asks, as the other
// PostgreSQL tests do; skipped where PERFHAT_SKIP_POSTGRES=1 and its binaries are absent).
// libperfhat's collection-budget status reaches editors through the handler, survives a restart,
// and hostile bodies are refused with the field named while what is stored stays.
#include <gtest/gtest.h>
#include <httplib.h>

#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "feedback-handler/budget/budget_status.h"
#include "feedback-handler/http/server.h"
#include "feedback-handler/store/sql.h"
#include "feedback-handler/store/store.h"
#include "tests/support/postgres_gtest.h"

namespace perfhat::handler {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

json status(const std::string& service, const std::string& instance, double overhead) {
  return {{"service", service},
          {"version", "1.0"},
          {"instance", instance},
          {"budget_share", 0.01},
          {"mode", "probing"},
          {"predicted_overhead", overhead},
          {"measured_overhead", 0.009},
          {"window_s", 10},
          {"probing_hz", 200},
          {"in_situ", {{"report_ns", 2600}, {"timed_reports", 40}}},
          {"window_price_ns", {{"report", 910}, {"cold", 150}}},
          {"window_cost_s", {{"report", 0.0001}, {"passed", 6e-05}, {"collector", 0.0007}}},
          {"classes",
           {{{"name", "shop::Cart"},
             {"frequency_hz", 321.8},
             {"duty_ratio", 0.005},
             {"weight", 2},
             {"pinned", false},
             {"traced", true},
             {"fraction", 1},
             {"overhead", 0.0004}},
            {{"name", "shop::Db"},
             {"frequency_hz", 9000},
             {"duty_ratio", 0.3},
             {"traced", false},
             {"fraction", 0},
             {"overhead", 0}}}},
          {"sampled_functions",
           {{{"function", "shop::Db::query(int)"},
             {"samples", 46},
             {"self", 12},
             {"estimated_cpu_s", 0.23},
             {"estimated_self_cpu_s", 0.06}}}},
          {"functions", {{{"function", "shop::Cart::sum"}, {"class", "shop::Cart"}}}}};
}

enum class Backend { kSqlite, kPostgres };
void PrintTo(Backend b, std::ostream* os) {
  *os << (b == Backend::kSqlite ? "SQLite" : "PostgreSQL");
}

class BudgetHttp : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/perfhat-budget-XXXXXX";
    dir_ = mkdtemp(tmpl);
    target_ = dir_ + "/s.sqlite";
    if (GetParam() == Backend::kPostgres) {
      perfhat::testing::PostgresServer* pg = nullptr;
      PERFHAT_REQUIRE_POSTGRES(pg);
      target_ = pg->createDatabase(perfhat::testing::databaseNameForTest("b_"));
    }
    start();
  }
  void TearDown() override {
    if (server_) stop();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  void start() {
    StoreOptions so;
    so.path = target_;
    store_ = std::make_unique<Store>(so);
    ServerOptions o;
    o.tokens = {"rw"};
    o.read_tokens = {"ro"};
    server_ = std::make_unique<HandlerServer>(*store_, o);
    port_ = server_->bind("127.0.0.1", 0);
    thread_ = std::thread([this] { server_->run(); });
  }
  void stop() {
    server_->stop();
    thread_.join();
    server_.reset();
    store_.reset();
  }
  httplib::Result post(const std::string& body, const std::string& token = "rw",
                       const char* type = "application/json") {
    httplib::Client c("127.0.0.1", port_);
    c.set_read_timeout(10s);
    c.set_bearer_token_auth(token.c_str());
    return c.Post("/v1/budget", body, type);
  }
  httplib::Result get(const std::string& query = "?service=shop") {
    httplib::Client c("127.0.0.1", port_);
    c.set_read_timeout(10s);
    c.set_bearer_token_auth("ro");
    return c.Get("/v1/budget" + query);
  }
  std::string errorOf(const httplib::Result& r) {
    return json::parse(r->body)["error"]["message"].get<std::string>();
  }
  std::string dir_;
  std::string target_;  // the store: a SQLite file or a PostgreSQL URL
  std::unique_ptr<Store> store_;
  std::unique_ptr<HandlerServer> server_;
  int port_ = 0;
  std::thread thread_;
};

TEST_P(BudgetHttp, NothingReceivedIsA404WithTheService) {
  auto r = get();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
  EXPECT_EQ(errorOf(r), "no collection-budget status of service shop");
}

TEST_P(BudgetHttp, PostedStatusIsReadBackAndSurvivesARestart) {
  auto p = post(status("shop", "h/1", 0.0081).dump());
  ASSERT_TRUE(p);
  ASSERT_EQ(p->status, 200) << p->body;
  stop();
  start();
  auto r = get();
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const json j = json::parse(r->body);
  EXPECT_EQ(j["service"], "shop");
  EXPECT_EQ(j["instance"], "h/1");
  EXPECT_EQ(j["version"], "1.0");
  EXPECT_GE(j["age_s"].get<double>(), 0);
  const json& s = j["status"];
  EXPECT_DOUBLE_EQ(s["predicted_overhead"].get<double>(), 0.0081);
  EXPECT_DOUBLE_EQ(s["measured_overhead"].get<double>(), 0.009);
  EXPECT_EQ(s["window_s"], 10);
  EXPECT_EQ(s["in_situ"]["report_ns"], 2600);
  EXPECT_EQ(s["in_situ"]["timed_reports"], 40);
  // The last window's prices and charge, kept in the store like the rest.
  EXPECT_EQ(s["window_price_ns"]["report"], 910);
  EXPECT_EQ(s["window_price_ns"]["cold"], 150);
  EXPECT_DOUBLE_EQ(s["window_cost_s"]["passed"].get<double>(), 6e-05);
  EXPECT_DOUBLE_EQ(s["window_cost_s"]["collector"].get<double>(), 0.0007);
  ASSERT_EQ(s["classes"].size(), 2u);
  EXPECT_EQ(s["classes"][0]["name"], "shop::Cart");
  EXPECT_EQ(s["classes"][0]["weight"], 2);
  EXPECT_EQ(s["classes"][1]["traced"], false);
  EXPECT_DOUBLE_EQ(s["sampled_functions"][0]["estimated_cpu_s"].get<double>(), 0.23);
  EXPECT_EQ(s["functions"][0]["class"], "shop::Cart");
  EXPECT_FALSE(s.contains("service"));  // the labels are the answer's, not repeated inside
}

TEST_P(BudgetHttp, TheNewestInstanceOfTheAskedServiceIsAnswered) {
  ASSERT_EQ(post(status("shop", "h/1", 0.001).dump())->status, 200);
  std::this_thread::sleep_for(2ms);  // received_ns orders them
  ASSERT_EQ(post(status("shop", "h/2", 0.002).dump())->status, 200);
  std::this_thread::sleep_for(2ms);
  ASSERT_EQ(post(status("cart", "h/3", 0.003).dump())->status, 200);
  auto shop = json::parse(get()->body);
  EXPECT_EQ(shop["instance"], "h/2");
  EXPECT_DOUBLE_EQ(shop["status"]["predicted_overhead"].get<double>(), 0.002);
  auto any = json::parse(get("")->body);
  EXPECT_EQ(any["service"], "cart");
  // The same instance again replaces its row.
  std::this_thread::sleep_for(2ms);
  ASSERT_EQ(post(status("shop", "h/1", 0.004).dump())->status, 200);
  shop = json::parse(get()->body);
  EXPECT_EQ(shop["instance"], "h/1");
  EXPECT_DOUBLE_EQ(shop["status"]["predicted_overhead"].get<double>(), 0.004);
}

TEST_P(BudgetHttp, HostileBodiesAreRefusedByFieldAndLoseNothingStored) {
  ASSERT_EQ(post(status("shop", "h/1", 0.0081).dump())->status, 200);
  json bad = status("shop", "h/1", 0.5);
  bad["classes"][1]["frequency_hz"] = -3;
  auto r = post(bad.dump());
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(errorOf(r),
            "budget status: classes[1].frequency_hz: must be a finite number in "
            "[0, 1e15]");
  bad = status("shop", "h/1", 0.5);
  bad["window_cost_s"]["passed"] = -1;
  EXPECT_EQ(errorOf(post(bad.dump())),
            "budget status: window_cost_s.passed: must be a finite number in [0, 1e15]");
  bad = status("shop", "h/1", 0.5);
  bad.erase("service");
  EXPECT_EQ(errorOf(post(bad.dump())), "budget status: service: is missing");
  bad = status("shop", "h/1", 0.5);
  bad["mode"] = "everything";
  EXPECT_EQ(errorOf(post(bad.dump())),
            "budget status: mode: must be rates or probing, not 'everything'");
  bad = status("shop", "h/1", 0.5);
  bad["classes"] = json::array();
  for (int i = 0; i < 1001; ++i) bad["classes"].push_back(bad["functions"][0]);
  EXPECT_EQ(errorOf(post(bad.dump())), "budget status: classes: has more than 1000 entries");
  EXPECT_EQ(post("{\"service\":", "rw")->status, 400);
  EXPECT_EQ(post(std::string(1000, '['))->status, 400);
  EXPECT_EQ(post(status("shop", "h/1", 0.5).dump(), "rw", "text/plain")->status, 415);
  EXPECT_EQ(post(std::string((1 << 20) + 1, ' '))->status, 413);
  EXPECT_EQ(post(status("shop", "h/1", 0.5).dump(), "ro")->status, 403);
  EXPECT_EQ(get("?service=" + std::string(300, 's'))->status, 400);
  const json j = json::parse(get()->body);
  EXPECT_DOUBLE_EQ(j["status"]["predicted_overhead"].get<double>(), 0.0081);
}

TEST_P(BudgetHttp, InstancesPerServiceAreBounded) {
  constexpr size_t kMax = budget::StatusLimits::kMaxInstancesPerService;
  for (size_t i = 0; i < kMax + 6; ++i) {
    ASSERT_EQ(post(status("shop", "h/" + std::to_string(i), 0.001).dump())->status, 200);
    std::this_thread::sleep_for(1ms);
  }
  sql::Db db = sql::Db::open(target_);
  sql::Stmt q(db, "SELECT COUNT(*), MIN(instance) FROM budget_status WHERE service='shop'");
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.i64(0), static_cast<int64_t>(kMax));
  EXPECT_EQ(json::parse(get()->body)["instance"], "h/" + std::to_string(kMax + 5));
}

INSTANTIATE_TEST_SUITE_P(Stores, BudgetHttp,
                         ::testing::Values(Backend::kSqlite, Backend::kPostgres),
                         [](const ::testing::TestParamInfo<Backend>& i) {
                           return i.param == Backend::kSqlite ? "SQLite" : "PostgreSQL";
                         });

}  // namespace
}  // namespace perfhat::handler
