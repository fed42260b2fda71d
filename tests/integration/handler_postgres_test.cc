// Scale-out (DESIGN §5 "Storage"): two deployed perfhat-handler processes writing to ONE real
// PostgreSQL, as replicas behind a load balancer would. Each replica writes its own partial
// aggregates; a batchGet on either answers the merged counts and percentiles of both.
#include <gtest/gtest.h>

#include <thread>

#include "tests/integration/handler_process.h"
#include "tests/integration/handler_test_util.h"
#include "tests/support/postgres_gtest.h"

namespace perfhat::testing {
namespace {

constexpr const char* kToken = "pg-token";

class HandlerPostgres : public ::testing::Test {
 protected:
  void SetUp() override {
    PERFHAT_REQUIRE_POSTGRES(server_);
    url_ = server_->createDatabase(databaseNameForTest("h_"));
  }
  std::vector<std::string> replicaArgs() const {
    return {"--mode", "deployed", "--store", url_, "--token", kToken};
  }

  PostgresServer* server_ = nullptr;
  std::string url_;
};

void post(const std::string& url, const otlp::ExportRequest& r) {
  auto c = client(url, kToken);
  auto res = c.Post("/v1/traces", otlp::encodeProtobuf(r), "application/x-protobuf");
  if (!res) throw std::runtime_error("POST /v1/traces: no response");
  if (res->status != 200) {
    throw std::runtime_error("POST /v1/traces: " + std::to_string(res->status) + " " + res->body);
  }
}

TEST_F(HandlerPostgres, TwoReplicasOneDatabaseEitherAnswersTheMergedView) {
  HandlerProcess a(replicaArgs()), b(replicaArgs());
  // Both replicas ingest at the same time, several requests each, into the same keys.
  std::vector<double> all;
  std::vector<std::vector<double>> per_request;
  for (int i = 0; i < 8; ++i) {
    per_request.push_back(lognormalLatencies(400, 100 + i, i % 2 ? 8e6 : 2e6));
    all.insert(all.end(), per_request.back().begin(), per_request.back().end());
  }
  std::string errors[2];
  auto feed = [&](int replica) {
    try {
      for (int i = replica; i < 8; i += 2) {
        const std::string service = replica == 0 ? "svc-a" : "svc-b";
        post(replica == 0 ? a.url() : b.url(),
             spansFor("shop::Cart::total", per_request[static_cast<size_t>(i)],
                      static_cast<uint64_t>(i), service));
      }
    } catch (const std::exception& e) {
      errors[replica] = e.what();
    }
  };
  std::thread ta(feed, 0), tb(feed, 1);
  ta.join();
  tb.join();
  ASSERT_EQ(errors[0], "");
  ASSERT_EQ(errors[1], "");

  std::vector<std::string> cursors;
  for (HandlerProcess* h : {&a, &b}) {
    auto c = client(h->url(), kToken);
    BatchGetResponse r = batchGet(c, {"shop::Cart::total"});
    ASSERT_EQ(r.items.size(), 1u) << "from " << h->url();
    const Stats& st = *r.items[0].stats;
    EXPECT_EQ(st.count, all.size());
    for (auto [q, got] : {std::pair{0.5, st.p50_ns}, {0.9, st.p90_ns}, {0.99, st.p99_ns}}) {
      const double exact = exactQuantile(all, q);
      EXPECT_LE(std::abs(got - exact), 0.01 * exact) << "q=" << q << " from " << h->url();
    }
    EXPECT_DOUBLE_EQ(st.min_ns, *std::min_element(all.begin(), all.end()));
    EXPECT_DOUBLE_EQ(st.max_ns, *std::max_element(all.begin(), all.end()));
    EXPECT_EQ(r.items[0].hosts, (std::vector<std::string>{"host-svc-a", "host-svc-b"}));
    EXPECT_EQ(r.items[0].services, (std::vector<std::string>{"svc-a", "svc-b"}));
    cursors.push_back(r.cursor);
  }
  // Both replicas hand out the same change cursor: one sequence for the whole store.
  EXPECT_EQ(cursors[0], cursors[1]);
  EXPECT_NE(cursors[0], "0");

  // An acknowledged batch is in PostgreSQL, not in the replica: kill -9 one, read from the other.
  auto more = lognormalLatencies(100, 999);
  post(a.url(), spansFor("shop::Cart::total", more, 999, "svc-a"));
  a.kill9();
  auto c = client(b.url(), kToken);
  EXPECT_EQ(batchGet(c, {"shop::Cart::total"}).items.at(0).stats->count, all.size() + 100);
}

TEST_F(HandlerPostgres, DatabaseOutageAnswers503AndRecovers) {
  HandlerProcess h(replicaArgs());
  auto lat = lognormalLatencies(50, 1);
  post(h.url(), spansFor("f", lat, 1));
  server_->stop();
  auto c = client(h.url(), kToken);
  auto res =
      c.Post("/v1/traces", otlp::encodeProtobuf(spansFor("f", lat, 2)), "application/x-protobuf");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 503) << res->body;
  server_->start();
  post(h.url(), spansFor("f", lat, 3));  // reconnects
  EXPECT_EQ(batchGet(c, {"f"}).items.at(0).stats->count, 100u);
}

TEST_F(HandlerPostgres, UnreachableOrMissingDatabaseStopsStartupWithAClearMessage) {
  std::string url = url_;
  url.replace(url.find("perfhat@"), 8, "perfhat:hunter2@");
  auto [code, out] = runHandler({"--mode", "deployed", "--listen", "127.0.0.1:0", "--store",
                                 url + "_missing", "--token", kToken});
  EXPECT_NE(code, 0);
  EXPECT_NE(out.find("no such database"), std::string::npos) << out;
  EXPECT_EQ(out.find("hunter2"), std::string::npos) << out;
}

}  // namespace
}  // namespace perfhat::testing
