// GET /v1/dynamic and /v1/dynamic/graph on a real HandlerServer (SQLite file, loopback HTTP),
// fed with OTLP spans over /v1/traces as a service would send them.
#include "feedback-handler/http/dynamic_routes.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "feedback-handler/http/server.h"
#include "feedback-handler/ingest/span_key.h"
#include "feedback-handler/otlp/otlp_encode.h"
#include "feedback-handler/store/store.h"

namespace perfhat::handler {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

uint64_t nowNs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
}

std::string key(const char* name) { return normalizeKey(name); }

class DynamicHttp : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/perfhat-dynamic-XXXXXX";
    dir_ = mkdtemp(tmpl);
    StoreOptions so;
    so.path = dir_ + "/s.sqlite";
    store_ = std::make_unique<Store>(so);
    ServerOptions o;
    o.tokens = {"rw"};
    server_ = std::make_unique<HandlerServer>(*store_, o);
    port_ = server_->bind("127.0.0.1", 0);
    thread_ = std::thread([this] { server_->run(); });
  }
  void TearDown() override {
    server_->stop();
    thread_.join();
    server_.reset();
    store_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  httplib::Client client(const std::string& token = "rw") const {
    httplib::Client c("127.0.0.1", port_);
    c.set_read_timeout(10s);
    if (!token.empty()) c.set_bearer_token_auth(token.c_str());
    return c;
  }

  // One request of the shop service: get (1000 µs) → load ×2 (200 µs) → query (50 µs) each.
  // The loads and queries go in one export request, get in the next (SDKs export spans as they
  // end). With `put`, a request of the other endpoint, two days ago.
  void send(int trace, bool put = false, const std::string& version = "1.0") {
    otlp::ExportRequest children, parent;
    for (auto* r : {&children, &parent}) {
      r->resources.push_back({{"service.name", std::string("shop")}, {"service.version", version}});
    }
    const uint64_t t0 = put ? nowNs() - 48 * 3600 * 1'000'000'000ULL : nowNs() - 5'000'000'000ULL;
    auto span = [&](otlp::ExportRequest& r, int id, int parent_id, const char* fn, uint64_t start,
                    uint64_t dur_us) {
      otlp::Span s;
      s.trace_id = std::string(15, 'T') + static_cast<char>(trace);
      s.span_id = std::string(6, 'S') + static_cast<char>(trace) + static_cast<char>(id);
      if (parent_id) {
        s.parent_span_id =
            std::string(6, 'S') + static_cast<char>(trace) + static_cast<char>(parent_id);
      }
      s.name = fn;
      s.start_unix_nano = start;
      s.end_unix_nano = start + dur_us * 1000;
      s.attributes = {{"code.function.name", std::string(fn)}};
      r.spans.push_back(std::move(s));
    };
    if (put) {
      span(parent, 1, 0, "shop::Api::put", t0, 300);
    } else {
      span(parent, 1, 0, "shop::Api::get", t0, 1000);
      for (int i = 0; i < 2; ++i) {
        const uint64_t at = t0 + 100'000 + i * 300'000;
        span(children, 2 + 2 * i, 1, "shop::Repo::load", at, 200);
        span(children, 3 + 2 * i, 2 + 2 * i, "shop::Db::query", at + 10'000, 50);
      }
    }
    auto c = client();
    for (auto* r : {&children, &parent}) {
      if (r->spans.empty()) continue;
      auto res = c.Post("/v1/traces", otlp::encodeJson(*r), "application/json");
      ASSERT_TRUE(res);
      ASSERT_EQ(res->status, 200) << res->body;
    }
  }
  json get(const std::string& path_and_query, int want = 200) {
    auto res = client().Get(path_and_query);
    EXPECT_TRUE(res);
    if (!res) return {};
    EXPECT_EQ(res->status, want) << res->body;
    return json::parse(res->body, nullptr, false);
  }
  static std::string q(const std::string& s) { return httplib::detail::encode_query_param(s); }

  std::string dir_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<HandlerServer> server_;
  std::thread thread_;
  int port_ = 0;
};

TEST_F(DynamicHttp, OneFunctionVisitsCallersCalleesSelfInclusiveAndDemand) {
  send(1, /*put=*/true);
  for (int t = 2; t < 12; ++t) send(t);
  const json j = get("/v1/dynamic?service=shop&key=" + q(key("shop::Repo::load")));
  EXPECT_EQ(j["key"], key("shop::Repo::load"));
  EXPECT_EQ(j["visits"], 20);
  // The data covers at most the minute the calls started in (up to now): 20 calls in at most a
  // minute are at least 1200 per hour.
  EXPECT_GE(j["calls_per_hour"].get<double>(), 1200);
  EXPECT_TRUE(j["coverage"]["from"].is_string());
  ASSERT_EQ(j["callers"].size(), 1u);
  EXPECT_EQ(j["callers"][0]["key"], key("shop::Api::get"));
  EXPECT_EQ(j["callers"][0]["count"], 20);
  ASSERT_EQ(j["callees"].size(), 1u);
  EXPECT_EQ(j["callees"][0]["key"], key("shop::Db::query"));
  EXPECT_EQ(j["callees"][0]["count"], 20);
  EXPECT_NEAR(j["self"]["p50_ns"].get<double>(), 150e3, 150e3 * 0.01);
  EXPECT_NEAR(j["self"]["mean_ns"].get<double>(), 150e3, 1e-6);
  EXPECT_NEAR(j["inclusive"]["p50_ns"].get<double>(), 200e3, 200e3 * 0.01);
  EXPECT_NEAR(j["inclusive"]["mean_ns"].get<double>(), 200e3, 1e-6);
  // Demand: get 10 × 600 µs = 6 ms; load 20 × 150 µs = 3 ms; query 20 × 50 µs = 1 ms.
  EXPECT_EQ(j["demand_rank"], 2);
  EXPECT_EQ(j["fan_in"], 1);
  EXPECT_FALSE(j["leaf"].get<bool>());
}

TEST_F(DynamicHttp, SelfPlusChildrenIsInclusiveWithinTheSketchAccuracy) {
  for (int t = 1; t < 6; ++t) send(t);  // the parent's spans come after its children's
  const json g = get("/v1/dynamic?service=shop&key=" + q(key("shop::Api::get")));
  double children_per_call = 0;
  for (const json& c : g["callees"]) {
    const json cj = get("/v1/dynamic?service=shop&key=" + q(c["key"].get<std::string>()));
    children_per_call += c["count"].get<double>() / g["visits"].get<double>() *
                         cj["inclusive"]["p50_ns"].get<double>();
  }
  const double incl = g["inclusive"]["p50_ns"].get<double>();
  EXPECT_NEAR(g["self"]["p50_ns"].get<double>() + children_per_call, incl, 0.01 * incl);
  EXPECT_NEAR(g["self"]["p50_ns"].get<double>(), 600e3, 600e3 * 0.01);
  EXPECT_EQ(g["demand_rank"], 1);
}

TEST_F(DynamicHttp, ServiceSummaryListsNeverCalledAndLeafFunctions) {
  send(1, /*put=*/true);  // the put endpoint ran two days ago, not in today's window
  for (int t = 2; t < 5; ++t) send(t);
  const json s = get("/v1/dynamic?service=shop");
  EXPECT_EQ(s["never_called"], json::array({key("shop::Api::put")}));
  EXPECT_EQ(s["leaves"], json::array({key("shop::Db::query")}));
  EXPECT_EQ(s["top_demand"][0]["key"], key("shop::Api::get"));
  EXPECT_TRUE(s["skew"].is_null());  // three functions: no tail to estimate
  const json put = get("/v1/dynamic?service=shop&key=" + q(key("shop::Api::put")));
  EXPECT_TRUE(put["never_called"].get<bool>());
  EXPECT_EQ(put["visits"], 0);
  EXPECT_TRUE(put["demand_rank"].is_null());
  // The window reaching back two days sees the put call.
  const std::string from = "2000-01-01T00:00:00Z";
  EXPECT_EQ(get("/v1/dynamic?service=shop&from=" + from)["never_called"], json::array());
  // Another service has none of these functions.
  get("/v1/dynamic?service=other&key=" + q(key("shop::Api::get")), 404);
}

TEST_F(DynamicHttp, GraphAsDotAndCsvMatrices) {
  for (int t = 1; t < 4; ++t) send(t);
  auto c = client();
  auto dot = c.Get("/v1/dynamic/graph?format=dot&service=shop");
  ASSERT_TRUE(dot);
  ASSERT_EQ(dot->status, 200) << dot->body;
  EXPECT_NE(dot->body.find("\"" + key("shop::Api::get") + "\" -> \"" + key("shop::Repo::load") +
                           "\" [label=\"6\"]"),
            std::string::npos)
      << dot->body;
  auto edges = c.Get("/v1/dynamic/graph?format=csv&matrix=edges&service=shop");
  ASSERT_TRUE(edges);
  EXPECT_NE(edges->body.find("\"" + key("shop::Repo::load") + "\",\"" + key("shop::Db::query") +
                             "\",6\n"),
            std::string::npos)
      << edges->body;
  auto vc = c.Get("/v1/dynamic/graph?format=csv&matrix=vc&step_minutes=10080&service=shop");
  ASSERT_TRUE(vc);
  EXPECT_NE(vc->body.find("\"VC*\",3,6,6\n"), std::string::npos) << vc->body;  // get, query, load
  auto fo = c.Get("/v1/dynamic/graph?format=csv&matrix=fo&step_minutes=10080&service=shop");
  ASSERT_TRUE(fo);
  EXPECT_NE(fo->body.find(",1,0,1\n"), std::string::npos) << fo->body;
}

// Answers are derived once per query and reused, but never past a commit: new data shows at once.
TEST_F(DynamicHttp, NewDataIsSeenByTheNextRead) {
  send(1);
  const std::string path = "/v1/dynamic?service=shop&key=" + q(key("shop::Db::query"));
  EXPECT_EQ(get(path)["visits"], 2);
  EXPECT_EQ(get(path)["visits"], 2);
  send(2);
  EXPECT_EQ(get(path)["visits"], 4);
}

// Per release: rows of other versions are left out; all versions merge without `version`.
TEST_F(DynamicHttp, OneReleaseOrAll) {
  send(1, false, "1.0");
  send(2, false, "2.0");
  send(3, false, "2.0");
  const std::string path = "/v1/dynamic?service=shop&key=" + q(key("shop::Repo::load"));
  EXPECT_EQ(get(path + "&version=1.0")["visits"], 2);
  EXPECT_EQ(get(path + "&version=2.0")["visits"], 4);
  EXPECT_EQ(get(path)["visits"], 6);
  get(path + "&version=3.0", 404);
}

TEST_F(DynamicHttp, BadRequestsAuthAndUnknownKeys) {
  send(1);
  get("/v1/dynamic", 400);
  get("/v1/dynamic?service=shop&limit=-1", 400);
  get("/v1/dynamic/graph?format=svg", 400);
  get("/v1/dynamic/graph?format=csv&matrix=vc&step_minutes=0", 400);
  get("/v1/dynamic?key=" + std::string(5000, 'k'), 400);
  get("/v1/dynamic?key=no-such-function", 404);
  get("/v1/dynamic?service=shop&from=yesterday", 400);
  auto anon = client("").Get("/v1/dynamic?service=shop");
  ASSERT_TRUE(anon);
  EXPECT_EQ(anon->status, 401);
  // Rows are listed for the windows that hold data: a fine step over a long range stays small.
  get("/v1/dynamic/graph?format=csv&service=shop&step_minutes=1&from=2000-01-01T00:00:00Z", 200);
}

// Per-call Bernoulli sampling (libperfhat's uniform sampler outside requests): each call is
// recorded with probability r and carries perfhat.sampling.weight = 1/r; a call whose caller was
// not recorded hangs under its nearest recorded ancestor. Visit counts must be the
// Horvitz-Thompson estimate Σ 1/r over recorded calls, an unbiased estimate of the true count
// (checked within 4 standard deviations for a fixed seed), not the number of recorded spans.
TEST_F(DynamicHttp, SampledCallsCountWithTheirWeight) {
  constexpr int kRequests = 400;  // each: get → load ×2 → query each
  constexpr double kRate = 0.25;
  std::mt19937_64 rng(20261125);
  std::bernoulli_distribution keep(kRate);
  otlp::ExportRequest r;
  r.resources.push_back({{"service.name", std::string("shop")}, {"service.version", "1.0"}});
  std::map<std::string, int> recorded;
  uint32_t next_id = 1;
  auto id8 = [](uint32_t v) {
    std::string s(8, 'S');
    for (int i = 0; i < 4; ++i) s[4 + i] = static_cast<char>(1 + ((v >> (7 * i)) & 0x7f));
    return s;
  };
  const uint64_t t0 = nowNs() - 5'000'000'000ULL;
  for (int t = 0; t < kRequests; ++t) {
    std::string trace(16, 'T');
    trace[14] = static_cast<char>(1 + t % 120);
    trace[15] = static_cast<char>(1 + t / 120);
    // Returns the span id when recorded, else the parent's (the nearest recorded ancestor).
    auto call = [&](const std::string& parent, const char* fn, uint64_t start, uint64_t dur_us) {
      if (!keep(rng)) return parent;
      otlp::Span s;
      s.trace_id = trace;
      s.span_id = id8(next_id++);
      s.parent_span_id = parent;
      s.name = fn;
      s.start_unix_nano = start;
      s.end_unix_nano = start + dur_us * 1000;
      s.attributes = {{"code.function.name", std::string(fn)},
                      {"perfhat.sampling.weight", 1 / kRate}};
      r.spans.push_back(std::move(s));
      ++recorded[fn];
      return r.spans.back().span_id;
    };
    const uint64_t at = t0 + static_cast<uint64_t>(t) * 2'000'000;
    const std::string get = call("", "shop::Api::get", at, 1000);
    for (int i = 0; i < 2; ++i) {
      const std::string load = call(get, "shop::Repo::load", at + 100'000 + i * 300'000, 200);
      call(load, "shop::Db::query", at + 110'000 + i * 300'000, 50);
    }
  }
  auto res = client().Post("/v1/traces", otlp::encodeJson(r), "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  for (const auto& [fn, truth] : std::map<std::string, int>{{"shop::Api::get", kRequests},
                                                            {"shop::Repo::load", 2 * kRequests},
                                                            {"shop::Db::query", 2 * kRequests}}) {
    const json j = get("/v1/dynamic?service=shop&key=" + q(key(fn.c_str())));
    const double visits = j["visits"].get<double>();
    EXPECT_DOUBLE_EQ(visits, recorded[fn] / kRate) << fn;  // each recorded call counts 1/r
    const double sd = std::sqrt(truth * (1 - kRate) / kRate);
    EXPECT_NEAR(visits, truth, 4 * sd) << fn << ": " << recorded[fn] << " recorded";
    EXPECT_GT(std::fabs(visits - recorded[fn]), 4 * sd) << fn << ": unscaled";
  }
}

}  // namespace
}  // namespace perfhat::handler
