// Data recorded by sampling, through the real perfhat-handler: calls recorded at a known rate
// carry weight 1/rate (OTLP spans: perfhat.sampling.weight; libperfhat's aggregate rows:
// weighted bins plus sampled_calls/sampled_records). The handler's counts and percentiles
// estimate the whole population, and batchGet says the data is estimated (sampled_calls,
// sampled_records: optional fields, absent for data recorded in full).
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "tests/integration/handler_process.h"
#include "tests/integration/handler_test_util.h"

namespace perfhat::testing {
namespace {

constexpr const char* kToken = "sampled-token";

class HandlerSampled : public ::testing::Test {
 protected:
  HandlerSampled()
      : dir_("sampled"),
        handler_({"--mode", "deployed", "--store", dir_ / "d.sqlite", "--token", kToken}) {}
  TempDir dir_;
  HandlerProcess handler_;
};

// Every `every`-th value: a rate of 1/every, as libperfhat's budget records a class.
std::vector<double> everyNth(const std::vector<double>& v, size_t every) {
  std::vector<double> out;
  for (size_t i = 0; i < v.size(); i += every) out.push_back(v[i]);
  return out;
}

void post(httplib::Client& c, const char* path, const std::string& body) {
  auto res = c.Post(path, body, "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
}

TEST_F(HandlerSampled, SpansAtRateOneQuarterGiveUnbiasedCountsAndSayEstimated) {
  auto c = client(handler_.url(), kToken);
  const auto population = lognormalLatencies(8000, 7);
  const auto sample = everyNth(population, 4);  // 2000 records of 8000 calls
  otlp::ExportRequest sampled = spansFor("shop::Cart::total", sample, 3);
  for (auto& s : sampled.spans) s.attributes.emplace_back("perfhat.sampling.weight", 4.0);
  post(c, "/v1/traces", otlp::encodeJson(sampled));
  post(c, "/v1/traces", otlp::encodeJson(spansFor("shop::Cart::full", population, 4)));

  BatchGetResponse r = batchGet(c, {"shop::Cart::total", "shop::Cart::full"});
  ASSERT_EQ(r.items.size(), 2u);
  const FeedbackItem& est = r.items[0];
  ASSERT_TRUE(est.stats);
  EXPECT_EQ(est.stats->count, population.size());  // 2000 records × weight 4
  EXPECT_DOUBLE_EQ(est.sampled_calls, 8000);
  EXPECT_DOUBLE_EQ(est.sampled_records, 2000);
  for (auto [q, got] : {std::pair{0.5, est.stats->p50_ns}, {0.9, est.stats->p90_ns}}) {
    // The weighted sketch holds the sample's quantiles (1 % sketch error), and those estimate
    // the population's (a 2000-record sample of a lognormal: a few % at most).
    EXPECT_LE(std::abs(got - exactQuantile(sample, q)), 0.01 * exactQuantile(sample, q));
    EXPECT_LE(std::abs(got - exactQuantile(population, q)), 0.08 * exactQuantile(population, q))
        << "q=" << q;
  }
  const FeedbackItem& full = r.items[1];
  EXPECT_EQ(full.stats->count, population.size());
  EXPECT_EQ(full.sampled_calls, 0);  // recorded in full: not marked

  // On the wire: the optional fields only where data was sampled.
  BatchGetRequest req;
  req.keys = {"shop::Cart::full"};
  auto raw = c.Post("/v1/feedback:batchGet", serialize(req), "application/json");
  ASSERT_TRUE(raw);
  EXPECT_EQ(raw->body.find("sampled_calls"), std::string::npos) << raw->body;
}

TEST_F(HandlerSampled, AggregateRowsAtRateOneTenthMixedWithFullRows) {
  auto c = client(handler_.url(), kToken);
  const double log_gamma = std::log(1.01 / 0.99);
  const auto population = lognormalLatencies(5000, 9);
  const auto sample = everyNth(population, 10);  // 500 records, weight 10
  std::map<int, double> bins;
  double sum = 0;
  for (double v : sample) {
    bins[static_cast<int>(std::ceil(std::log(v) / log_gamma))] += 10;
    sum += 10 * v;
  }
  nlohmann::json jbins = nlohmann::json::array();
  for (auto [i, n] : bins) jbins.push_back({i, n});
  const int64_t minute = std::chrono::duration_cast<std::chrono::minutes>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  auto body = [&](const nlohmann::json& row) {
    return nlohmann::json{{"resource", {{"service.name", "svc"}}},
                          {"time_unix_nano", std::to_string(minute * 60'000'000'000LL)},
                          {"sites", {{{"function", "double shop::Cart::sum()"}}}},
                          {"rows", {row}}}
        .dump();
  };
  nlohmann::json row = {{"kind", "function"},    {"site", 0},  {"minute", minute},
                        {"bins", jbins},         {"sum", sum}, {"sampled_calls", 5000},
                        {"sampled_records", 500}};
  post(c, "/v1/aggregates", body(row));
  // A later interval traced in full (the plan changed): 3 calls of weight 1, not sampled.
  post(c, "/v1/aggregates",
       body({{"kind", "function"}, {"site", 0}, {"minute", minute}, {"bins", {{1500, 3}}}}));

  BatchGetResponse r = batchGet(c, {"double shop::Cart::sum()"});
  ASSERT_EQ(r.items.size(), 1u);
  const FeedbackItem& it = r.items[0];
  EXPECT_EQ(it.stats->count, 5003u);
  EXPECT_DOUBLE_EQ(it.sampled_calls, 5000);  // of 5003: all but 3 estimated
  EXPECT_DOUBLE_EQ(it.sampled_records, 500);
  EXPECT_LE(std::abs(it.stats->p50_ns - exactQuantile(population, 0.5)),
            0.1 * exactQuantile(population, 0.5));

  // A bad sampled_calls is refused whole, naming the field.
  row["sampled_calls"] = -1;
  auto bad = c.Post("/v1/aggregates", body(row), "application/json");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  EXPECT_NE(bad->body.find("sampled_calls"), std::string::npos) << bad->body;
  EXPECT_DOUBLE_EQ(batchGet(c, {"double shop::Cart::sum()"}).items[0].sampled_calls, 5000);
}

}  // namespace
}  // namespace perfhat::testing
