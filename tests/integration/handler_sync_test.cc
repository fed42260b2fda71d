// Two deployed handlers (two regions) merged exactly by one local handler: the local view's
// percentiles equal the sketch of the union of both regions' latencies, within the 1 % bound;
// when an upstream goes down the local handler keeps serving what it has.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/integration/handler_process.h"
#include "tests/integration/handler_test_util.h"

namespace perfhat::testing {
namespace {

TEST(HandlerSync, LocalHandlerMergesTwoUpstreamsExactly) {
  TempDir dir("sync");
  auto east = std::make_unique<HandlerProcess>(std::vector<std::string>{
      "--mode", "deployed", "--store", dir / "east.sqlite", "--token", "e"});
  HandlerProcess west({"--mode", "deployed", "--store", dir / "west.sqlite", "--token", "w"});
  auto a = lognormalLatencies(4000, 21, 1e6);
  auto b = lognormalLatencies(1500, 22, 30e6);  // a slower region: the tail comes from here
  auto ce = client(east->url(), "e");
  auto cw = client(west.url(), "w");
  ASSERT_EQ(ce.Post("/v1/traces", otlp::encodeProtobuf(spansFor("geo::route", a, 1, "api-east")),
                    "application/x-protobuf")
                ->status,
            200);
  ASSERT_EQ(cw.Post("/v1/traces", otlp::encodeJson(spansFor("geo::route", b, 2, "api-west", "2.0")),
                    "application/json")
                ->status,
            200);
  ASSERT_EQ(cw.Post("/v1/traces", otlp::encodeJson(spansFor("geo::onlyWest", {5e5}, 3)),
                    "application/json")
                ->status,
            200);

  HandlerProcess local(std::vector<std::string>{"--mode", "local", "--store", dir / "local.sqlite",
                                                "--upstream", east->url() + ",e", "--upstream",
                                                west.url() + ",w", "--sync-interval", "3600"});
  auto cl = client(local.url());
  auto sync = cl.Post("/v1/sync", "", "application/json");
  ASSERT_TRUE(sync);
  ASSERT_EQ(sync->status, 200) << sync->body;
  EXPECT_TRUE(nlohmann::json::parse(sync->body)["ok"].get<bool>()) << sync->body;
  // Pulling again must not double count (rows replace per origin).
  ASSERT_EQ(cl.Post("/v1/sync", "", "application/json")->status, 200);

  std::vector<double> all = a;
  all.insert(all.end(), b.begin(), b.end());
  BatchGetResponse r = batchGet(cl, {"geo::route", "geo::onlyWest"});
  ASSERT_EQ(r.items.size(), 2u);
  const FeedbackItem& route = r.items[0].key == "geo::route" ? r.items[0] : r.items[1];
  ASSERT_TRUE(route.stats);
  EXPECT_EQ(route.stats->count, all.size());
  for (auto [q, got] : {std::pair{0.5, route.stats->p50_ns},
                        {0.9, route.stats->p90_ns},
                        {0.99, route.stats->p99_ns}}) {
    double exact = exactQuantile(all, q);
    EXPECT_LE(std::abs(got - exact), 0.01 * exact) << "q=" << q;
  }
  EXPECT_EQ(route.versions, (std::vector<std::string>{"1.0", "2.0"}));
  EXPECT_EQ(route.services, (std::vector<std::string>{"api-east", "api-west"}));
  EXPECT_EQ(route.hosts, (std::vector<std::string>{"host-api-east", "host-api-west"}));

  // New data upstream arrives through the cursor on the next pull.
  ASSERT_EQ(
      ce.Post("/v1/traces", otlp::encodeProtobuf(spansFor("geo::route", {1e6}, 9, "api-east")),
              "application/x-protobuf")
          ->status,
      200);
  // East goes down: the pull reports it, west still syncs, and reads keep working.
  east.reset();
  auto s2 = cl.Post("/v1/sync", "", "application/json");
  ASSERT_TRUE(s2);
  auto j = nlohmann::json::parse(s2->body);
  EXPECT_FALSE(j["ok"].get<bool>());
  r = batchGet(cl, {"geo::route"});
  ASSERT_EQ(r.items.size(), 1u);
  EXPECT_EQ(r.items[0].stats->count, all.size());  // the extra span never reached us: east died
  auto health = cl.Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  auto hj = nlohmann::json::parse(health->body);
  EXPECT_EQ(hj["upstreams"].size(), 2u);
  auto changes = cl.Get("/v1/changes?since=0");
  ASSERT_TRUE(changes);
  EXPECT_EQ(nlohmann::json::parse(changes->body)["keys"].size(), 2u);
}

TEST(HandlerSync, NewUpstreamDataArrivesIncrementally) {
  TempDir dir("sync-inc");
  HandlerProcess up({"--mode", "deployed", "--store", dir / "u.sqlite", "--token", "u"});
  HandlerProcess local(std::vector<std::string>{"--mode", "local", "--store", dir / "l.sqlite",
                                                "--upstream", up.url() + ",u", "--sync-interval",
                                                "3600"});
  auto cu = client(up.url(), "u");
  auto cl = client(local.url());
  for (int round = 1; round <= 3; ++round) {
    ASSERT_EQ(cu.Post("/v1/traces", otlp::encodeProtobuf(spansFor("inc::fn", {1e6, 2e6}, round)),
                      "application/x-protobuf")
                  ->status,
              200);
    ASSERT_EQ(cl.Post("/v1/sync", "", "application/json")->status, 200);
    EXPECT_EQ(batchGet(cl, {"inc::fn"}).items.at(0).stats->count, 2u * round);
  }
}

}  // namespace
}  // namespace perfhat::testing
