// perfhat-handler end to end on loopback: OTLP in (JSON, protobuf, gzip), merged percentiles out,
// and every kind of bad input refused with the right status while the handler keeps serving.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <ctime>
#include <map>
#include <nlohmann/json.hpp>

#include "tests/integration/handler_process.h"
#include "tests/integration/handler_test_util.h"

namespace perfhat::testing {
namespace {

constexpr const char* kToken = "test-token-123";

class HandlerIngest : public ::testing::Test {
 protected:
  HandlerIngest()
      : dir_("ingest"),
        handler_({"--mode", "deployed", "--store", dir_ / "d.sqlite", "--token", kToken,
                  "--read-token", "reader", "--max-body-bytes", "4000000"}) {}
  TempDir dir_;
  HandlerProcess handler_;
};

TEST_F(HandlerIngest, JsonAndProtobufInMergedPercentilesOutWithinSketchError) {
  auto c = client(handler_.url(), kToken);
  auto a = lognormalLatencies(3000, 1);
  auto b = lognormalLatencies(2000, 2, 8e6);
  auto res = c.Post("/v1/traces", otlp::encodeJson(spansFor("shop::Cart::total", a, 11)),
                    "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  EXPECT_EQ(res->body, "{}");
  res = c.Post("/v1/traces", otlp::encodeProtobuf(spansFor("shop::Cart::total", b, 12)),
               "application/x-protobuf");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  EXPECT_EQ(res->get_header_value("Content-Type"), "application/x-protobuf");

  std::vector<double> all = a;
  all.insert(all.end(), b.begin(), b.end());
  BatchGetResponse r = batchGet(c, {"shop::Cart::total", "shop::Missing::fn"});
  ASSERT_EQ(r.items.size(), 1u);
  EXPECT_EQ(r.missing, std::vector<std::string>{"shop::Missing::fn"});
  const Stats& st = *r.items[0].stats;
  EXPECT_EQ(st.count, all.size());
  for (auto [q, got] :
       {std::pair{0.5, st.p50_ns}, {0.9, st.p90_ns}, {0.95, st.p95_ns}, {0.99, st.p99_ns}}) {
    double exact = exactQuantile(all, q);
    EXPECT_LE(std::abs(got - exact), 0.01 * exact) << "q=" << q;
  }
  EXPECT_DOUBLE_EQ(st.min_ns, *std::min_element(all.begin(), all.end()));
  EXPECT_DOUBLE_EQ(st.max_ns, *std::max_element(all.begin(), all.end()));
  EXPECT_EQ(r.items[0].file, "/src/app.cc");
  EXPECT_EQ(r.items[0].line, 42);
  EXPECT_EQ(r.items[0].hosts, std::vector<std::string>{"host-svc"});

  // The read-only token may read, GET /v1/feedback serves one key.
  auto reader = client(handler_.url(), "reader");
  auto one = reader.Get("/v1/feedback?key=shop::Cart::total");
  ASSERT_TRUE(one);
  ASSERT_EQ(one->status, 200) << one->body;
  EXPECT_EQ(nlohmann::json::parse(one->body)["stats"]["count"], all.size());
  auto none = reader.Get("/v1/feedback?key=nothing");
  ASSERT_TRUE(none);
  EXPECT_EQ(none->status, 404);
}

TEST_F(HandlerIngest, GzipBodiesAreAccepted) {
  auto c = client(handler_.url(), kToken);
  c.set_compress(true);  // Content-Encoding: gzip
  auto lat = lognormalLatencies(500, 3);
  auto res = c.Post("/v1/traces", otlp::encodeProtobuf(spansFor("gz::fn", lat, 5)),
                    "application/x-protobuf");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  c.set_compress(false);
  EXPECT_EQ(batchGet(c, {"gz::fn"}).items.at(0).stats->count, 500u);
}

TEST_F(HandlerIngest, PartialSuccessReportsRejectedSpans) {
  auto c = client(handler_.url(), kToken);
  otlp::ExportRequest r = spansFor("ok::fn", {1000, 2000}, 7);
  std::string body = otlp::encodeJson(r);
  // A third span whose end precedes its start.
  nlohmann::json doc = nlohmann::json::parse(body);
  auto bad = doc["resourceSpans"][0]["scopeSpans"][0]["spans"][0];
  bad["endTimeUnixNano"] = "1";
  doc["resourceSpans"][0]["scopeSpans"][0]["spans"].push_back(bad);
  auto res = c.Post("/v1/traces", doc.dump(), "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  auto j = nlohmann::json::parse(res->body);
  EXPECT_EQ(j["partialSuccess"]["rejectedSpans"], "1");
  EXPECT_FALSE(j["partialSuccess"]["errorMessage"].get<std::string>().empty());
  EXPECT_EQ(batchGet(c, {"ok::fn"}).items.at(0).stats->count, 2u);
}

// A child exported before its parent (SDKs export spans as they end) still gets its call-site
// edge; the cross-request index reports itself on /metrics.
TEST_F(HandlerIngest, CallSiteEdgesLinkAcrossExportRequests) {
  auto c = client(handler_.url(), kToken);
  otlp::ExportRequest children = spansFor("edge::Child", {1000, 2000, 3000}, 21);
  otlp::ExportRequest parent = spansFor("edge::Parent", {9000}, 22);
  for (auto& s : children.spans) {
    s.trace_id = parent.spans[0].trace_id;
    s.parent_span_id = parent.spans[0].span_id;
  }
  auto res = c.Post("/v1/traces", otlp::encodeProtobuf(children), "application/x-protobuf");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  res = c.Post("/v1/traces", otlp::encodeJson(parent), "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;

  BatchGetResponse r = batchGet(c, {"edge::Child"});
  ASSERT_EQ(r.items.size(), 1u);
  ASSERT_EQ(r.items[0].callsites.size(), 1u);
  const CallSiteStats& cs = r.items[0].callsites[0];
  EXPECT_EQ(cs.caller, "edge::Parent");
  EXPECT_EQ(cs.count, 3u);
  EXPECT_DOUBLE_EQ(cs.calls_per_parent, 3.0);  // three calls under one parent invocation

  auto m = c.Get("/metrics");
  ASSERT_TRUE(m);
  EXPECT_NE(m->body.find("perfhat_handler_span_index_linked_total 3\n"), std::string::npos)
      << m->body;
  EXPECT_NE(m->body.find("perfhat_handler_span_index_waiting_evicted_total 0\n"),
            std::string::npos);
  EXPECT_NE(m->body.find("perfhat_handler_commits_total"), std::string::npos);
}

void expectJsonError(const httplib::Result& res, int status) {
  ASSERT_TRUE(res) << "no response";
  EXPECT_EQ(res->status, status) << res->body;
  auto j = nlohmann::json::parse(res->body, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << res->body;
  EXPECT_TRUE(j["error"]["code"].is_string()) << res->body;
  EXPECT_TRUE(j["error"]["message"].is_string()) << res->body;
}

TEST_F(HandlerIngest, BadInputIsRefusedNothingIsStoredAndTheHandlerKeepsServing) {
  auto c = client(handler_.url(), kToken);
  std::string proto = otlp::encodeProtobuf(spansFor("bad::fn", {1000, 2000, 3000}, 9));
  expectJsonError(c.Post("/v1/traces", proto.substr(0, proto.size() - 5), "application/x-protobuf"),
                  400);
  expectJsonError(
      c.Post("/v1/traces", std::string("\xff\xff\xff\xff garbage"), "application/x-protobuf"), 400);
  expectJsonError(c.Post("/v1/traces",
                         R"({"resourceSpans":[{"scopeSpans":[{"spans":[{"name":{"oops":1}}]}]}]})",
                         "application/json"),
                  400);
  expectJsonError(c.Post("/v1/traces", "{not json", "application/json"), 400);
  expectJsonError(c.Post("/v1/traces", "x", "text/plain"), 415);
  expectJsonError(c.Post("/v1/traces", std::string(5'000'000, 'x'), "application/json"), 413);
  auto wrong = client(handler_.url(), "wrong-token");
  expectJsonError(wrong.Post("/v1/traces", proto, "application/x-protobuf"), 401);
  auto anonymous = client(handler_.url());
  expectJsonError(anonymous.Post("/v1/feedback:batchGet", R"({"keys":[]})", "application/json"),
                  401);
  auto reader = client(handler_.url(), "reader");
  expectJsonError(reader.Post("/v1/traces", proto, "application/x-protobuf"), 403);
  expectJsonError(c.Get("/v1/nope"), 404);
  expectJsonError(c.Post("/v1/feedback:batchGet", R"({"keys":"nope"})", "application/json"), 400);
  expectJsonError(c.Get("/v1/changes?since=abc"), 400);

  // Nothing was stored: the change cursor never moved.
  auto changes = c.Get("/v1/changes?since=0");
  ASSERT_TRUE(changes);
  auto j = nlohmann::json::parse(changes->body);
  EXPECT_EQ(j["cursor"], "0");
  EXPECT_TRUE(j["keys"].empty());
  // Still serving, and accepting good data.
  auto health = client(handler_.url()).Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  auto ok = c.Post("/v1/traces", proto, "application/x-protobuf");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
  auto metrics = client(handler_.url()).Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("perfhat_handler_spans_ingested_total 3"), std::string::npos)
      << metrics->body;
  EXPECT_NE(metrics->body.find("perfhat_handler_requests_total{status=\"401\"}"),
            std::string::npos);
}

// Hostile input against the real binary: spans dated 1970 or 2540, with sampling weight 1e308
// or a 300-byte service name are refused with a reason while the rest is stored; JSON nested
// 200,000 deep is a 400 on every endpoint that parses JSON, and the handler keeps serving.
TEST_F(HandlerIngest, HostileSpansAreRefusedWithAReasonAndDeepJsonIsA400) {
  auto c = client(handler_.url(), kToken);
  otlp::ExportRequest r = spansFor("ok::hostile", {1000, 2000}, 7);
  otlp::ExportRequest bad = spansFor("bad::hostile", {1000, 2000, 3000}, 8);
  bad.spans[0].start_unix_nano = 1'000'000'000;  // 1970
  bad.spans[0].end_unix_nano = 2'000'000'000;
  bad.spans[1].start_unix_nano = 18'000'000'000'000'000'000ULL;  // 2540
  bad.spans[1].end_unix_nano = bad.spans[1].start_unix_nano + 10;
  bad.spans[2].attributes.emplace_back("perfhat.sampling.weight", 1e308);
  for (auto& s : bad.spans) r.spans.push_back(s);
  otlp::ExportRequest wide = spansFor("wide::hostile", {1000}, 9, std::string(300, 's'));
  r.resources.push_back(wide.resources[0]);
  wide.spans[0].resource = 1;
  r.spans.push_back(wide.spans[0]);
  auto res = c.Post("/v1/traces", otlp::encodeJson(r), "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  auto j = nlohmann::json::parse(res->body);
  EXPECT_EQ(j["partialSuccess"]["rejectedSpans"], "4");
  EXPECT_NE(j["partialSuccess"]["errorMessage"].get<std::string>().find("outside the accepted"),
            std::string::npos)
      << res->body;
  BatchGetResponse got = batchGet(c, {"ok::hostile", "bad::hostile", "wide::hostile"});
  ASSERT_EQ(got.items.size(), 1u);
  EXPECT_EQ(got.items[0].stats->count, 2u);

  const std::string deep = std::string(200000, '[') + std::string(200000, ']');
  expectJsonError(c.Post("/v1/traces", R"({"resourceSpans":)" + deep + "}", "application/json"),
                  400);
  expectJsonError(c.Post("/v1/aggregates", R"({"sites":)" + deep + "}", "application/json"), 400);
  expectJsonError(
      c.Post("/v1/feedback:batchGet", R"({"keys":["a"],"range":)" + deep + "}", "application/json"),
      400);
  auto health = client(handler_.url()).Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
}

// libperfhat's aggregate export (docs/aggregate-export.md) against the real binary: histogram
// rows in, the same percentiles out as the latencies they were binned from, call sites linked;
// bad bodies refused whole with a JSON error while the handler keeps serving.
TEST_F(HandlerIngest, AggregateRowsInMergedPercentilesOut) {
  auto c = client(handler_.url(), kToken);
  const double log_gamma = std::log(1.01 / 0.99);
  auto lat = lognormalLatencies(4000, 5);
  std::map<int, double> bins;
  double sum = 0;
  for (double v : lat) {
    bins[static_cast<int>(std::ceil(std::log(v) / log_gamma))] += 1;
    sum += v;
  }
  nlohmann::json jbins = nlohmann::json::array();
  for (auto [i, n] : bins) jbins.push_back({i, n});
  const int64_t minute = std::chrono::duration_cast<std::chrono::minutes>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();  // inside the read API's default range
  nlohmann::json body = {
      {"resource", {{"service.name", "svc"}, {"host.name", "host-agg"}}},
      {"time_unix_nano", std::to_string(minute * 60'000'000'000LL)},
      {"sites",
       {{{"name", "GET /cart"}, {"function", "void shop::Api::cart()"}},
        {{"name", "double shop::Cart::sum()"},
         {"function", "double shop::Cart::sum()"},
         {"file", "/src/cart.cc"},
         {"line", 12}}}},
      {"rows",
       {{{"kind", "function"}, {"site", 1}, {"minute", minute}, {"bins", jbins}, {"sum", sum}},
        {{"kind", "callsite"},
         {"site", 1},
         {"caller", 0},
         {"minute", minute},
         {"bins", jbins},
         {"sum", sum},
         {"parents", 1000}}}}};
  auto res = c.Post("/v1/aggregates", body.dump(), "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  EXPECT_EQ(res->body, "{}");

  BatchGetResponse r = batchGet(c, {"shop::Cart::sum()"});
  ASSERT_EQ(r.items.size(), 1u) << r.missing.size();
  const Stats& st = *r.items[0].stats;
  EXPECT_EQ(st.count, lat.size());
  for (auto [q, got] : {std::pair{0.5, st.p50_ns}, {0.9, st.p90_ns}, {0.99, st.p99_ns}}) {
    const double exact = exactQuantile(lat, q);
    EXPECT_LE(std::abs(got - exact), 0.01 * exact) << "q=" << q;
  }
  EXPECT_NEAR(st.mean_ns, sum / static_cast<double>(lat.size()), 1e-6 * st.mean_ns);
  EXPECT_EQ(r.items[0].file, "/src/cart.cc");
  EXPECT_EQ(r.items[0].line, 12);
  EXPECT_EQ(r.items[0].hosts, std::vector<std::string>{"host-agg"});
  ASSERT_EQ(r.items[0].callsites.size(), 1u);
  EXPECT_EQ(r.items[0].callsites[0].count, lat.size());
  EXPECT_DOUBLE_EQ(r.items[0].callsites[0].calls_per_parent, lat.size() / 1000.0);

  // Refused whole: garbage, a wrong type, an index out of range, a bad token, a reader.
  const std::string good = body.dump();
  expectJsonError(c.Post("/v1/aggregates", "{not json", "application/json"), 400);
  body["rows"][1]["bins"] = {{5, -1}};
  expectJsonError(c.Post("/v1/aggregates", body.dump(), "application/json"), 400);
  body["rows"][1]["bins"] = jbins;
  body["rows"][1]["caller"] = 7;
  expectJsonError(c.Post("/v1/aggregates", body.dump(), "application/json"), 400);
  expectJsonError(c.Post("/v1/aggregates", good, "text/plain"), 415);
  expectJsonError(
      client(handler_.url(), "wrong-token").Post("/v1/aggregates", good, "application/json"), 401);
  expectJsonError(client(handler_.url(), "reader").Post("/v1/aggregates", good, "application/json"),
                  403);
  r = batchGet(c, {"shop::Cart::sum()"});
  ASSERT_EQ(r.items.size(), 1u);
  EXPECT_EQ(r.items[0].stats->count, lat.size());  // nothing of the refused bodies
  auto metrics = client(handler_.url()).Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("perfhat_handler_aggregate_rows_ingested_total 2"),
            std::string::npos)
      << metrics->body;
}

// A batchGet large enough to be read and written on parallel threads (≥ 2 × 1,024 keys) gives
// the same items as the same keys asked in calls too small to be split.
// Calls the library lost (docs/aggregate-export.md `dropped`) reach every function of that
// service in the read window, and no other service's functions.
TEST_F(HandlerIngest, ExporterLossesAreShownBesideTheCountsOfTheirService) {
  auto c = client(handler_.url(), kToken);
  const int64_t minute = std::chrono::duration_cast<std::chrono::minutes>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  auto report = [&](const std::string& service, const std::string& function,
                    const nlohmann::json& dropped) {
    nlohmann::json body = {{"resource", {{"service.name", service}}},
                           {"time_unix_nano", std::to_string(minute * 60'000'000'000LL)},
                           {"sites", {{{"name", function}, {"function", function}}}},
                           {"rows",
                            {{{"kind", "function"},
                              {"site", 0},
                              {"minute", minute},
                              {"bins", {{700, 10}}},
                              {"sum", 1e4}}}}};
    if (!dropped.is_null()) body["dropped"] = dropped;
    auto res = c.Post("/v1/aggregates", body.dump(), "application/json");
    ASSERT_TRUE(res);
    ASSERT_EQ(res->status, 200) << res->body;
  };
  report("lossy", "void lossy::f()", {{"calls", 1500}, {"spans", "1500"}, {"rows", "0"}});
  report("lossy", "void lossy::g()", {{"calls", 500}, {"spans", "500"}, {"rows", "0"}});
  report("whole", "void whole::h()", nullptr);

  BatchGetResponse r = batchGet(c, {"void lossy::g()", "void whole::h()"});
  ASSERT_EQ(r.items.size(), 2u);
  for (const FeedbackItem& item : r.items) {
    EXPECT_EQ(item.dropped_calls, item.key == "lossy::g()" ? 2000 : 0) << item.key;
  }
  auto metrics = client(handler_.url()).Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("perfhat_handler_exporter_lost_calls_total 2000\n"),
            std::string::npos)
      << metrics->body;
}

TEST_F(HandlerIngest, LargeBatchGetIsAnsweredLikeSmallOnes) {
  auto c = client(handler_.url(), kToken);
  constexpr int kKeys = 2600;
  const int64_t minute = std::chrono::duration_cast<std::chrono::minutes>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  nlohmann::json sites = nlohmann::json::array(), rows = nlohmann::json::array();
  std::vector<std::string> keys;
  for (int k = 0; k < kKeys; ++k) {
    keys.push_back("void big::fn" + std::to_string(k) + "(int)");
    sites.push_back({{"name", keys.back()},
                     {"function", keys.back()},
                     {"file", "/src/big.cc"},
                     {"line", k + 1}});
    rows.push_back({{"kind", "function"},
                    {"site", k},
                    {"minute", minute - k % 3},
                    {"bins", {{700 + k % 50, 1 + k % 7}, {760, 2}}},
                    {"sum", 3e6 * (3 + k % 7)}});
    if (k > 0 && k % 4 == 0) {
      rows.push_back({{"kind", "callsite"},
                      {"site", k},
                      {"caller", k / 2},
                      {"minute", minute},
                      {"bins", {{740, 3}}},
                      {"sum", 3e6},
                      {"parents", 2}});
    }
  }
  nlohmann::json body = {{"resource", {{"service.name", "svc"}, {"host.name", "host-big"}}},
                         {"time_unix_nano", std::to_string(minute * 60'000'000'000LL)},
                         {"sites", sites},
                         {"rows", rows}};
  auto res = c.Post("/v1/aggregates", body.dump(), "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;

  keys.push_back("big::nope()");
  // A fixed window: rates depend on it, and "now" moves between the calls.
  auto at = [](int64_t m) {
    const std::time_t t = static_cast<std::time_t>(m * 60);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return std::string(text);
  };
  const TimeWindow range{at(minute - 10), at(minute + 1)};
  auto ask = [&](size_t begin, size_t end) {
    BatchGetRequest req;
    req.keys.assign(keys.begin() + static_cast<ptrdiff_t>(begin),
                    keys.begin() + static_cast<ptrdiff_t>(end));
    req.range = range;
    auto got = c.Post("/v1/feedback:batchGet", serialize(req), "application/json");
    EXPECT_TRUE(got && got->status == 200);
    return got ? parseBatchGetResponse(got->body) : BatchGetResponse{};
  };
  const BatchGetResponse large = ask(0, keys.size());
  BatchGetResponse small;
  for (size_t begin = 0; begin < keys.size(); begin += 1000) {
    BatchGetResponse part = ask(begin, std::min(begin + 1000, keys.size()));
    small.items.insert(small.items.end(), part.items.begin(), part.items.end());
    small.missing.insert(small.missing.end(), part.missing.begin(), part.missing.end());
  }
  ASSERT_EQ(large.items.size(), static_cast<size_t>(kKeys));
  EXPECT_EQ(large.missing, std::vector<std::string>{"big::nope()"});
  EXPECT_EQ(large.missing, small.missing);
  for (int k = 0; k < kKeys; ++k) {
    ASSERT_EQ(nlohmann::json(large.items[k]).dump(), nlohmann::json(small.items[k]).dump());
  }
  EXPECT_EQ(large.items[8].callsites.size(), 1u);
  EXPECT_EQ(large.items[8].stats->p50_ns, std::nearbyint(large.items[8].stats->p50_ns));
}

TEST(HandlerStartup, RateLimitAnswers429) {
  TempDir dir("ratelimit");
  HandlerProcess h({"--mode", "deployed", "--store", dir / "r.sqlite", "--allow-unauthenticated",
                    "--rate-limit", "0.01"});
  auto c = client(h.url());
  int ok = 0, limited = 0;
  for (int i = 0; i < 6; ++i) {
    auto res = c.Get("/v1/changes?since=0");
    ASSERT_TRUE(res);
    if (res->status == 200) ++ok;
    if (res->status == 429) {
      ++limited;
      EXPECT_FALSE(res->get_header_value("Retry-After").empty());
    }
  }
  EXPECT_GE(ok, 1);
  EXPECT_GE(limited, 1);
}

TEST(HandlerStartup, CorruptOrUnusableStoreIsAClearStartupError) {
  TempDir dir("corrupt");
  {
    std::FILE* f = std::fopen((dir / "bad.sqlite").c_str(), "wb");
    std::string junk(16384, 'j');
    std::fwrite(junk.data(), 1, junk.size(), f);
    std::fclose(f);
  }
  auto [code, out] = runHandler({"--mode", "deployed", "--store", dir / "bad.sqlite",
                                 "--allow-unauthenticated", "--listen", "127.0.0.1:0"});
  EXPECT_NE(code, 0);
  EXPECT_NE(out.find("bad.sqlite"), std::string::npos) << out;
  auto [code2, out2] = runHandler({"--mode", "deployed", "--store", dir / "missing/dir/x.sqlite",
                                   "--allow-unauthenticated", "--listen", "127.0.0.1:0"});
  EXPECT_NE(code2, 0);
  EXPECT_NE(out2.find("cannot open store"), std::string::npos) << out2;
  auto [code3, out3] = runHandler({"--mode", "deployed", "--store", dir / "x.sqlite"});
  EXPECT_EQ(code3, 2);
  EXPECT_NE(out3.find("--token"), std::string::npos) << out3;
  auto [code4, out4] = runHandler({"--help"});
  EXPECT_EQ(code4, 0);
  EXPECT_NE(out4.find("--upstream"), std::string::npos);
  auto [code5, out5] = runHandler({"--version"});
  EXPECT_EQ(code5, 0);
  EXPECT_NE(out5.find("perfhat-handler"), std::string::npos);
}

}  // namespace
}  // namespace perfhat::testing
