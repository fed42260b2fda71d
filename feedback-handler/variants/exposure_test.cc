// Exposure under probe distribution (issue 23): the hand-computed example through the pure
// functions, the ingest of variant traffic, and a batchGet on a real SQLite store.
#include "feedback-handler/variants/exposure.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "common/feedback.h"
#include "common/test_units.h"
#include "feedback-handler/ingest/aggregate_rows.h"
#include "feedback-handler/ingest/aggregator.h"
#include "feedback-handler/store/store.h"

namespace perfhat::handler {
namespace {

namespace fs = std::filesystem;

using perfhat::test_units::kNow;
const char* kHot = "svc::hot(int)";   // probed by variants 0 and 2
const char* kCold = "svc::cold()";    // probed by variant 3 only
const char* kNever = "svc::never()";  // in no variant

// Release r1: 4 variants on 6 replicas (0 1 2 3 0 1). kHot runs on replicas 0, 2, 4: 3 of 6.
const char* kManifest = R"json({"release":"r1","strategy":"rb","h_bound":1,
  "variants":[{"id":0,"units":["svc::hot(int)"]},{"id":1,"units":["svc::other()"]},
              {"id":2,"units":["svc::hot(int)"]},{"id":3,"units":["svc::cold()"]}],
  "assignment":[0,1,2,3,0,1]})json";

// Requests served per variant in the window: 300, 200, 100, 400 (1,000 in all). kHot's
// variants served 300 + 100 = 400: a traffic share of 40 %; 400 observed calls stand for 1,000.
std::vector<VariantTraffic> handRows() {
  std::vector<VariantTraffic> t;
  const double requests[] = {300, 200, 100, 400};
  for (int v = 0; v < 4; ++v) t.push_back({"svc", "r1", v, -1, requests[v], 0});
  return t;
}
TrafficIndex handTraffic() { return TrafficIndex::of(handRows()); }

std::unique_ptr<ReleaseCatalog> catalogWithR1() {
  auto c = std::make_unique<ReleaseCatalog>("");
  c->add(parseReleaseManifest(kManifest));
  return c;
}

TEST(VariantExposure, HandComputedShareOfReplicasAndOfTraffic) {
  auto owned = catalogWithR1();
  ReleaseCatalog& c = *owned;
  auto e = exposureOf(kHot, {"svc"}, handTraffic(), c);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->releases, std::vector<std::string>{"r1"});
  EXPECT_EQ(e->replicas, 6u);
  EXPECT_EQ(e->replicas_probed, 3u);
  EXPECT_EQ(e->traffic_basis, "requests");
  EXPECT_DOUBLE_EQ(e->traffic_share, 0.4);

  FeedbackItem item;
  item.key = kHot;
  item.stats = Stats{};
  item.stats->count = 400;
  item.stats->errors = 8;
  item.stats->rate_per_s = 2;
  normalizeByExposure(item, *e);
  EXPECT_EQ(item.stats->count, 1000u);
  EXPECT_EQ(item.stats->errors, 20u);
  EXPECT_DOUBLE_EQ(item.stats->rate_per_s, 5);
  EXPECT_EQ(item.exposure->observed_count, 400u);

  auto cold = exposureOf(kCold, {}, handTraffic(), c);
  EXPECT_EQ(cold->replicas_probed, 1u);
  EXPECT_DOUBLE_EQ(cold->traffic_share, 0.4);
  auto never = exposureOf(kNever, {}, handTraffic(), c);
  EXPECT_EQ(never->replicas_probed, 0u);
  EXPECT_DOUBLE_EQ(never->traffic_share, 0);

  // Another service's traffic, or an unknown release, claims nothing.
  EXPECT_FALSE(exposureOf(kHot, {"other"}, handTraffic(), c));
  auto unknown = handRows();
  for (auto& t : unknown) t.release = "r9";
  EXPECT_FALSE(exposureOf(kHot, {}, TrafficIndex::of(unknown), c));

  // Without request roots counted, the share of replicas stands in: 3 of 6.
  auto no_requests = handRows();
  for (auto& t : no_requests) t.requests = 0;
  auto by_replicas = exposureOf(kHot, {}, TrafficIndex::of(no_requests), c);
  EXPECT_EQ(by_replicas->traffic_basis, "replicas");
  EXPECT_DOUBLE_EQ(by_replicas->traffic_share, 0.5);
}

TEST(VariantExposure, TrafficSubKeysRoundTripAndRefuseWhatTheyCannotHold) {
  EXPECT_EQ(trafficSub("r1", "3", "11"), "r1|3|11");
  EXPECT_EQ(trafficSub("r1", "3", ""), "r1|3|");
  EXPECT_EQ(trafficSub("r 1", "3", "1"), "");
  EXPECT_EQ(trafficSub("r1", "x", "1"), "");
  EXPECT_EQ(trafficSub(std::string(65, 'r'), "1", ""), "");
  VariantTraffic t;
  ASSERT_TRUE(parseTrafficSub("r1|3|11", t));
  EXPECT_EQ(t.release, "r1");
  EXPECT_EQ(t.variant, 3);
  EXPECT_EQ(t.replica, 11);
  EXPECT_FALSE(parseTrafficSub("r1|3", t));
  EXPECT_FALSE(parseTrafficSub("r1|-3|", t));
}

TEST(VariantExposure, ManifestsAreReadFromThePlannersHistory) {
  fs::path dir = fs::temp_directory_path() / ("perfhat-releases-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "release-r1.json") << kManifest;
  std::ofstream(dir / "release-r2.json") << R"({"release":"r2","variants":"no"})";
  ReleaseCatalog c(dir.string());
  auto m = c.find("r1");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->assignment.size(), 6u);
  EXPECT_EQ(m->replicasProbing("svc::hot(int)"), 3u);
  EXPECT_FALSE(c.find("r2"));
  ASSERT_EQ(c.problems().size(), 1u);
  EXPECT_NE(c.problems()[0].find("release-r2.json"), std::string::npos);
  fs::remove_all(dir);
}

TEST(VariantExposure, IngestKeepsEachVariantsRequestsAndRecords) {
  otlp::ExportRequest r;
  r.resources.push_back({{"service.name", std::string("svc")},
                         {"perfhat.release", std::string("r1")},
                         {"perfhat.variant", std::string("2")},
                         {"perfhat.replica", std::string("2")}});
  otlp::Span root;
  root.trace_id = std::string(16, 'T');
  root.span_id = std::string(8, 'R');
  root.kind = 2;  // SERVER
  root.name = "GET /x";
  root.start_unix_nano = kNow;
  root.end_unix_nano = kNow + 1000;
  otlp::Span child = root;
  child.span_id = std::string(8, 'C');
  child.parent_span_id = root.span_id;
  child.kind = 1;
  child.attributes = {{"code.function.name", std::string("svc::hot(int)")}};
  r.spans = {root, child, child};
  r.spans[2].span_id = std::string(8, 'D');
  Batch b;
  aggregate(r, b);
  auto it = b.aggregates.find(
      AggKey{AggKind::kTraffic, "", "r1|2|2", kNow / kBucketNs, "svc", "", "", ""});
  ASSERT_NE(it, b.aggregates.end());
  EXPECT_DOUBLE_EQ(it->second.x1, 1);  // the request root
  EXPECT_DOUBLE_EQ(it->second.x2, 3);  // every record

  // The aggregate export format carries the same resource attributes.
  Batch a;
  decodeAggregateRows(
      "{\"resource\":{\"service.name\":\"svc\",\"perfhat.release\":\"r1\","
      "\"perfhat.variant\":\"0\"},\"sites\":[{\"name\":\"h\",\"function\":\"int "
      "svc::hot(int)\"}],\"rows\":[{\"kind\":\"function\",\"site\":0,\"minute\":"
      "29395000,\"bins\":[[100,5]]}]}",
      a, nullptr);
  auto rows =
      a.aggregates.find(AggKey{AggKind::kTraffic, "", "r1|0|", 29395000, "svc", "", "", ""});
  ASSERT_NE(rows, a.aggregates.end());
  EXPECT_DOUBLE_EQ(rows->second.x1, 0);
  EXPECT_DOUBLE_EQ(rows->second.x2, 5);
}

// The hand-computed example through a real SQLite store: what a batchGet answers.
TEST(VariantExposure, BatchGetNormalizesCountsAndNamesWhatNoVariantProbed) {
  fs::path dir = fs::temp_directory_path() / ("perfhat-exposure-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  StoreOptions o;
  o.path = (dir / "s.sqlite").string();
  o.now_ns = [] { return kNow; };
  o.releases = std::make_shared<ReleaseCatalog>("");
  o.releases->add(parseReleaseManifest(kManifest));
  Store s(o);
  const int64_t bucket = kNow / kBucketNs - 5;
  Batch b;
  AggValue& hot = b.aggregates[AggKey{AggKind::kFunction, kHot, "", bucket, "svc", "1", "", ""}];
  for (int i = 0; i < 400; ++i) hot.sketch.add(1e6, 1);
  b.functions[kHot].last_seen_ns = bucket * kBucketNs;
  for (const auto& t : handRows()) {
    AggValue& v =
        b.aggregates[AggKey{AggKind::kTraffic, "", "r1|" + std::to_string(t.variant) + "|", bucket,
                            "svc", "1", "", ""}];
    v.x1 = t.requests;
  }

  // A request root (always probed, never in a variant) with data: no exposure is claimed.
  const char* kRoot = "svc::Api::getTasks()";
  AggValue& root = b.aggregates[AggKey{AggKind::kFunction, kRoot, "", bucket, "svc", "1", "", ""}];
  for (int i = 0; i < 1000; ++i) root.sketch.add(2e6, 1);
  b.functions[kRoot].last_seen_ns = bucket * kBucketNs;
  s.write(b);

  BatchGetRequest req;
  req.keys = {kHot, kNever, kCold, kRoot};
  BatchGetResponse r = s.batchGet(req);
  ASSERT_EQ(r.items.size(), 2u);
  EXPECT_EQ(r.items[1].key, kRoot);
  EXPECT_EQ(r.items[1].stats->count, 1000u);
  EXPECT_FALSE(r.items[1].exposure);
  const FeedbackItem& item = r.items[0];
  EXPECT_EQ(item.stats->count, 1000u);
  ASSERT_TRUE(item.exposure);
  EXPECT_EQ(item.exposure->observed_count, 400u);
  EXPECT_EQ(item.exposure->replicas_probed, 3u);
  EXPECT_EQ(item.exposure->replicas, 6u);
  EXPECT_DOUBLE_EQ(item.exposure->traffic_share, 0.4);
  EXPECT_EQ(r.missing,
            (std::vector<std::string>{kNever, kCold}));  // as before: backward compatible
  ASSERT_EQ(r.unprobed.size(), 1u);  // kCold was probed (variant 3) and simply not called
  EXPECT_EQ(r.unprobed[0].key, kNever);
  EXPECT_EQ(r.unprobed[0].exposure.replicas, 6u);

  // The JSON round trip keeps both new fields; a reader that predates them ignores them.
  nlohmann::json j = r;
  EXPECT_EQ(j["items"][0]["exposure"]["replicas_probed"], 3);
  EXPECT_EQ(j["unprobed"][0]["key"], kNever);
  EXPECT_EQ(j.get<BatchGetResponse>(), r);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace perfhat::handler
