#include "feedback-handler/store/store.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <random>

#include "common/crc32.h"
#include "feedback-handler/store/sql.h"
#include "feedback-handler/store/store_test_fixture.h"
#include "feedback-handler/util/rfc3339.h"
#include "tests/support/postgres_gtest.h"

namespace perfhat::handler {
namespace {

using namespace store_test;  // NOLINT(google-build-using-namespace): the fixture

INSTANTIATE_TEST_SUITE_P(Backends, StoreTest,
                         ::testing::Values(sql::Backend::kSqlite, sql::Backend::kPostgres),
                         [](const auto& info) {
                           return info.param == sql::Backend::kSqlite ? "Sqlite" : "Postgres";
                         });

TEST_P(StoreTest, WritesMergeAndReadBackWithinSketchAccuracy) {
  Store s(opts());
  const int64_t bucket = kNow / kBucketNs - 5;
  std::mt19937 rng(1);
  std::lognormal_distribution<double> d(14, 1);
  std::vector<double> all;
  for (int batch = 0; batch < 4; ++batch) {
    Batch b;
    for (int i = 0; i < 500; ++i) {
      double v = d(rng);
      all.push_back(v);
      addFn(b, "ns::f(int)", bucket + batch % 2, v);
    }
    b.functions["ns::f(int)"].mangled = "_ZN2ns1fEi";
    s.write(b);
  }
  BatchGetRequest req;
  req.keys = {"ns::f(int)", "_ZN2ns1fEi", "nope()"};
  BatchGetResponse r = s.batchGet(req);
  ASSERT_EQ(r.items.size(), 1u);  // the mangled name resolves to the same key: one item
  ASSERT_EQ(r.missing, std::vector<std::string>{"nope()"});
  const Stats& st = *r.items[0].stats;
  EXPECT_EQ(st.count, 2000u);
  std::sort(all.begin(), all.end());
  double exact = all[static_cast<size_t>(0.99 * (all.size() - 1))];
  EXPECT_NEAR(st.p99_ns, exact, 0.01 * exact);
  EXPECT_EQ(r.items[0].mangled, "_ZN2ns1fEi");
  EXPECT_EQ(r.items[0].versions, std::vector<std::string>{"1.0"});
  EXPECT_EQ(r.cursor, "4");
}

// Writes of many rows at once (on PostgreSQL: multi-row statements of 128 rows and
// power-of-two remainders, reading stored rows the same way) merge exactly, through a warm cache
// and a cold one (a reopened store), for aggregates and functions alike.
TEST_P(StoreTest, ManyRowsMergeExactlyThroughWarmAndColdCaches) {
  const int64_t bucket = kNow / kBucketNs - 1;
  auto batchOf = [&](int keys, int first, int samples, int line) {
    Batch b;
    for (int k = first; k < first + keys; ++k) {
      const std::string key = "many::fn" + std::to_string(k) + "()";
      AggValue& v = b.aggregates[AggKey{AggKind::kFunction, key, "", bucket, "svc", "1", "", ""}];
      for (int i = 0; i < samples; ++i) v.sketch.add(1e6 * (1 + k % 7));
      v.x1 = samples;  // errors
      AggValue& c =
          b.aggregates[AggKey{AggKind::kCallSite, key, "many::main()", bucket, "svc", "1", "", ""}];
      c.sketch.add(2e6);
      b.functions[key] = FunctionInfo{"", line ? "/src/many.cc" : "", line, kNow};
    }
    return b;
  };
  {
    StoreOptions cold = opts();
    cold.hot_rows = 0;  // no cache: every merge reads its stored rows back
    Store s(cold);
    s.write(batchOf(300, 0, 1, 10));  // all new: 600 rows, 300 functions
    s.write(batchOf(305, 0, 2, 0));   // 300 stored + 5 new; line 0 keeps the stored line
  }
  Store s(opts());  // a later process (on PostgreSQL: rows of a new origin, merged on read)
  s.write(batchOf(301, 4, 1, 12));  // keys 4..304
  s.write(batchOf(301, 4, 1, 0));   // the same keys again, merged through the warm cache
  BatchGetRequest req;
  for (int k : {0, 3, 4, 150, 299, 300, 304})
    req.keys.push_back("many::fn" + std::to_string(k) + "()");
  BatchGetResponse r = s.batchGet(req);
  ASSERT_EQ(r.items.size(), req.keys.size());
  for (const FeedbackItem& item : r.items) {
    const int k = std::stoi(item.key.substr(std::string("many::fn").size()));
    const uint64_t want = (k < 300 ? 1u : 0u) + 2u + (k >= 4 ? 2u : 0u);
    EXPECT_EQ(item.stats->count, want) << item.key;
    EXPECT_EQ(item.stats->errors, want) << item.key;
    ASSERT_EQ(item.callsites.size(), 1u) << item.key;
    EXPECT_EQ(item.callsites[0].count, want - 1) << item.key;  // one sample per write
    EXPECT_EQ(item.line, k >= 4 ? 12 : 10) << item.key;
  }
}

TEST_P(StoreTest, RangeAndBaselineSelectBuckets) {
  Store s(opts());
  Batch b;
  const int64_t recent = kNow / kBucketNs - 10, old = kNow / kBucketNs - int64_t{3} * 24 * 60;
  for (int i = 0; i < 10; ++i) addFn(b, "f()", recent, 1000);
  for (int i = 0; i < 10; ++i) addFn(b, "f()", old, 5000);
  s.write(b);
  BatchGetRequest req{{"f()"}, std::nullopt, std::nullopt};
  auto r = s.batchGet(req);
  ASSERT_EQ(r.items.size(), 1u);
  EXPECT_EQ(r.items[0].stats->count, 10u);  // default window: last 24 h
  EXPECT_NEAR(r.items[0].stats->p50_ns, 1000, 10);
  req.baseline = TimeWindow{formatRfc3339(old * kBucketNs - kBucketNs * 60),
                            formatRfc3339(old * kBucketNs + kBucketNs * 60)};
  r = s.batchGet(req);
  ASSERT_TRUE(r.items[0].baseline.has_value());
  EXPECT_NEAR(r.items[0].baseline->p50_ns, 5000, 50);
  req.range = TimeWindow{"bogus", ""};
  EXPECT_THROW(s.batchGet(req), std::invalid_argument);
}

// batchGet accumulates the rows of one key while they stream by and reuses its accumulators for
// the next key: nothing may leak from one key into another, every kind of row must land on its
// own item, and keys that need JSON escaping (or are not ASCII) must still be found.
TEST_P(StoreTest, BatchGetKeepsKeysApartAcrossAllRowKinds) {
  Store s(opts());
  const int64_t bucket = kNow / kBucketNs - 30;
  const std::vector<std::string> keys = {"a::f(int)", "quote\"d\\key\t()", "caf\xc3\xa9()",
                                         "plain()"};
  std::map<std::string, DDSketch> want_fn;
  Batch b;
  for (size_t k = 0; k < keys.size(); ++k) {
    for (int m = 0; m < 3; ++m) {
      AggValue& v = b.aggregates[AggKey{AggKind::kFunction, keys[k], "", bucket + m, "svc",
                                        "v" + std::to_string((k + m) % 2), "", ""}];
      for (int i = 0; i < 10 * static_cast<int>(k + 1); ++i) {
        const double x = 1000.0 * static_cast<double>((k + 1) * (i + 1));
        v.sketch.add(x);
        want_fn[keys[k]].add(x);
      }
    }
    b.functions[keys[k]] = FunctionInfo{"", "/src/x.cc", static_cast<int>(k), bucket * kBucketNs};
  }
  // Call sites of plain(): two callers with different counts, one of them a stored function.
  for (int i = 0; i < 4; ++i) {
    b.aggregates[AggKey{AggKind::kCallSite, "plain()", "a::f(int)", bucket, "svc", "v0", "", ""}]
        .sketch.add(500);
  }
  b.aggregates[AggKey{AggKind::kCallSite, "plain()", "zz()", bucket, "svc", "v0", "", ""}]
      .sketch.add(700);
  b.aggregates[AggKey{AggKind::kCallSite, "plain()", "zz()", bucket, "svc", "v0", "", ""}].x1 = 2;
  // Loops and result sizes of a::f only.
  for (int l : {2, 0}) {
    AggValue& v = b.aggregates[AggKey{AggKind::kLoop, "a::f(int)", std::to_string(l), bucket, "svc",
                                      "v0", "", ""}];
    v.sketch.add(8 + l);
    v.line = 40 + l;
  }
  b.aggregates[AggKey{AggKind::kResultSize, "a::f(int)", "", bucket, "svc", "v0", "", ""}]
      .sketch.add(12);
  s.write(b);

  BatchGetRequest req;
  req.keys = {"plain()", "nope()", keys[1], keys[0], keys[2], "plain()"};
  BatchGetResponse r = s.batchGet(req);
  ASSERT_EQ(r.items.size(), 4u);
  EXPECT_EQ(r.missing, std::vector<std::string>{"nope()"});
  const std::vector<std::string> order = {"plain()", keys[1], keys[0], keys[2]};
  for (size_t i = 0; i < order.size(); ++i) {
    const FeedbackItem& it = r.items[i];
    ASSERT_EQ(it.key, order[i]);
    const DDSketch& want = want_fn[it.key];
    ASSERT_TRUE(it.stats.has_value()) << it.key;
    EXPECT_EQ(it.stats->count, static_cast<uint64_t>(want.count())) << it.key;
    // Durations are answered in whole nanoseconds.
    EXPECT_EQ(it.stats->p50_ns, std::nearbyint(want.quantile(0.5))) << it.key;
    EXPECT_EQ(it.stats->p99_ns, std::nearbyint(want.quantile(0.99))) << it.key;
    EXPECT_EQ(it.stats->max_ns, std::nearbyint(want.max())) << it.key;
    EXPECT_EQ(it.stats->mean_ns, std::nearbyint(want.mean())) << it.key;
    EXPECT_EQ(it.versions, (std::vector<std::string>{"v0", "v1"})) << it.key;
    EXPECT_EQ(it.services, std::vector<std::string>{"svc"}) << it.key;
    EXPECT_EQ(it.callsites.empty(), it.key != "plain()") << it.key;
    EXPECT_EQ(it.loops.empty(), it.key != "a::f(int)") << it.key;
    EXPECT_EQ(it.result_size.has_value(), it.key == "a::f(int)") << it.key;
  }
  const FeedbackItem& plain = r.items[0];
  ASSERT_EQ(plain.callsites.size(), 2u);
  EXPECT_EQ(plain.callsites[0].caller, "a::f(int)");  // by count, descending
  EXPECT_EQ(plain.callsites[0].count, 4u);
  EXPECT_DOUBLE_EQ(plain.callsites[0].calls_per_parent, 4.0 / want_fn["a::f(int)"].count());
  EXPECT_GT(plain.callsites[0].caller_rate_per_s, 0);
  EXPECT_EQ(plain.callsites[1].caller, "zz()");
  EXPECT_DOUBLE_EQ(plain.callsites[1].calls_per_parent, 0.5);  // no totals: count / parents
  const FeedbackItem& f = r.items[2];
  ASSERT_EQ(f.loops.size(), 2u);
  EXPECT_EQ(f.loops[0].ordinal, 0);
  EXPECT_EQ(f.loops[0].line, 40);
  EXPECT_EQ(f.loops[1].ordinal, 2);
  EXPECT_NEAR(f.loops[1].iterations_mean, 10, 0.2);
  EXPECT_EQ(f.result_size->count, 1u);

  // A damaged stored sketch costs its own row only.
  {
    sql::Db db = sql::Db::open(opts().path);
    sql::Stmt u(db, "UPDATE aggregates SET sketch=? WHERE key=? AND kind='f' AND bucket=?");
    u.bindBlob(1, "not a sketch").bind(2, std::string_view("plain()")).bind(3, bucket);
    u.step();
  }
  r = s.batchGet(BatchGetRequest{{"plain()", keys[0]}, std::nullopt, std::nullopt});
  ASSERT_EQ(r.items.size(), 2u);
  EXPECT_EQ(r.items[0].stats->count, 80u);  // 2 of its 3 buckets of 40
  EXPECT_EQ(r.items[1].stats->count, static_cast<uint64_t>(want_fn[keys[0]].count()));
}

TEST_P(StoreTest, ReplaceModeOverwritesPerOriginAndReadsMergeOrigins) {
  Store s(opts());
  const int64_t bucket = kNow / kBucketNs - 1;
  for (int round = 0; round < 3; ++round) {  // the same upstream rows pulled three times
    Batch a, b;
    for (int i = 0; i < 100; ++i) addFn(a, "f()", bucket, 100, 1, "up-a");
    for (int i = 0; i < 50; ++i) addFn(b, "f()", bucket, 900, 1, "up-b");
    s.write(a, WriteMode::kReplace);
    s.write(b, WriteMode::kReplace);
  }
  auto r = s.batchGet(BatchGetRequest{{"f()"}, std::nullopt, std::nullopt});
  EXPECT_EQ(r.items.at(0).stats->count, 150u);
}

TEST_P(StoreTest, ChangesAndExportFollowTheCursor) {
  Store s(opts());
  const int64_t bucket = kNow / kBucketNs;
  Batch b1;
  addFn(b1, "a()", bucket, 1);
  uint64_t c1 = s.write(b1);
  Batch b2;
  addFn(b2, "b()", bucket, 1);
  b2.hosts[{"b()", "h"}] = kNow;
  uint64_t c2 = s.write(b2);
  EXPECT_GT(c2, c1);
  ChangesPage all = s.changes(0);
  EXPECT_EQ(all.keys.size(), 2u);
  EXPECT_EQ(all.cursor, c2);
  ChangesPage since = s.changes(c1);
  EXPECT_EQ(since.keys, std::vector<std::string>{"b()"});
  ExportPage e = s.exportSince(c1);
  EXPECT_EQ(e.rows.aggregates.size(), 1u);
  EXPECT_EQ(e.rows.hosts.size(), 1u);
  EXPECT_EQ(e.cursor, c2);
  ExportPage paged = s.exportSince(0, 1);
  EXPECT_TRUE(paged.more);
  EXPECT_EQ(paged.cursor, c1);
  EXPECT_TRUE(s.exportSince(c2).rows.aggregates.empty());
}

// A sketch blob with the totals a sketch wrote before they were bounded (ddsketch.cc layout):
// one bin of `count` at index 691 (~1e6 ns), count and sum infinite.
std::string unboundedBlob(double count) {
  std::string blob = "DDS1";
  auto putDouble = [&](double v) { blob.append(reinterpret_cast<const char*>(&v), 8); };
  putDouble(0.01);
  blob += "\x80\x10";  // max_bins 2048 (varint)
  const double inf = std::numeric_limits<double>::infinity();
  for (double v : {0.0, inf, inf, 1e6, 1e6}) putDouble(v);
  blob += "\x01\xb6\x0a\x01";  // one bin, index 691 (zigzag varint), a raw double count
  putDouble(count);
  const uint32_t crc = crc32(blob);
  blob.append(reinterpret_cast<const char*>(&crc), 4);
  return blob;
}

// Sampling weights of 1e19 and 1e308 used to make a count of 2^63 and an infinite sum that made
// the row unreadable (and the next merge replaced it). Totals now saturate: the row reads, counts
// stay in range, and later data merges into it.
TEST_P(StoreTest, HugeSamplingWeightsKeepTheRowReadableWithCountsInRange) {
  Store s(opts());
  const int64_t bucket = kNow / kBucketNs - 2;
  for (double w : {1e308, 1e19, 3.0}) {
    Batch b;
    addFn(b, "w()", bucket, 1e6, w);
    b.aggregates.begin()->second.x1 = w;  // weighted errors
    s.write(b);
  }
  BatchGetResponse r = s.batchGet(BatchGetRequest{{"w()"}, std::nullopt, std::nullopt});
  ASSERT_EQ(r.items.size(), 1u);
  ASSERT_TRUE(r.items[0].stats);
  EXPECT_EQ(r.items[0].stats->count, 1'000'000'000'000'000'000u);
  EXPECT_EQ(r.items[0].stats->errors, 1'000'000'000'000'000'000u);
  EXPECT_NEAR(r.items[0].stats->mean_ns, 1e6, 1e4);
  ExportPage page = s.exportSince(0);
  ASSERT_EQ(page.rows.aggregates.size(), 1u);
  EXPECT_EQ(page.rows.aggregates.begin()->second.sketch.count(), DDSketch::kMaxCount);
}

// A row that holds out-of-range values anyway (written by an older binary) reads clamped, and a
// later write merges into it instead of replacing it.
TEST_P(StoreTest, ARowHoldingOutOfRangeValuesStillReadsAndIsMergedInto) {
  const int64_t bucket = kNow / kBucketNs - 2;
  // With an origin of its own, so a second Store (a new replica origin on PostgreSQL) merges into
  // the same row.
  {
    Store s(opts());
    Batch b;
    addFn(b, "old()", bucket, 1e6, 1, "up");
    s.write(b);
  }
  {
    sql::Db db = sql::Db::open(opts().path);
    sql::Stmt u(db, "UPDATE aggregates SET sketch=?, x1=?");
    const std::string blob = unboundedBlob(1e308);
    u.bindBlob(1, blob).bind(2, 1e300);
    u.step();
  }
  const uint64_t repaired = DDSketch::repairedBlobs();
  Store s(opts());  // nothing cached: the row is read from the table
  BatchGetResponse r = s.batchGet(BatchGetRequest{{"old()"}, std::nullopt, std::nullopt});
  ASSERT_EQ(r.items.size(), 1u);
  ASSERT_TRUE(r.items[0].stats);
  EXPECT_EQ(r.items[0].stats->count, 1'000'000'000'000'000'000u);
  EXPECT_EQ(r.items[0].stats->errors, 1'000'000'000'000'000'000u);
  EXPECT_GT(DDSketch::repairedBlobs(), repaired);
  Batch more;
  addFn(more, "old()", bucket, 1e6, 1, "up");
  s.write(more);  // merged into the stored row (multi-row select on PostgreSQL)
  ExportPage page = s.exportSince(0);
  ASSERT_EQ(page.rows.aggregates.size(), 1u);
  EXPECT_EQ(page.rows.aggregates.begin()->second.sketch.count(), DDSketch::kMaxCount)
      << "the stored row was replaced, not merged into";
  EXPECT_EQ(page.rows.aggregates.begin()->second.x1, DDSketch::kMaxCount);
}

// Rows dated beyond now + the clock-skew allowance lie outside every read window and purge never
// removes them: the store does not take them from any writer (sync included).
TEST_P(StoreTest, RowsDatedBeyondTheClockSkewAllowanceAreNotStored) {
  Store s(opts());
  Batch b;
  addFn(b, "soon()", kNow / kBucketNs + 5, 1);
  addFn(b, "later()", kNow / kBucketNs + 60 * 24 * 365 * 100, 1);  // 2125
  addFn(b, "old()", 0, 1);                                         // 1970: purge removes it
  b.hosts[{"later()", "h"}] = INT64_MAX;
  s.write(b, WriteMode::kReplace);
  EXPECT_EQ(s.futureRowsDropped(), 1u);
  EXPECT_EQ(s.aggregateCount(), 2u);
  ExportPage page = s.exportSince(0);
  for (const auto& [key, info] : page.rows.functions) {
    EXPECT_LE(info.last_seen_ns, kNow + 10 * kBucketNs) << key;
  }
  for (const auto& [kh, seen] : page.rows.hosts) EXPECT_LE(seen, kNow + 10 * kBucketNs);
  EXPECT_EQ(s.purge(), 1);
  EXPECT_EQ(s.aggregateCount(), 1u);
}

TEST_P(StoreTest, RetentionPurgesOldBuckets) {
  StoreOptions o = opts();
  o.retention_minutes = 60;
  Store s(o);
  Batch b;
  addFn(b, "old()", kNow / kBucketNs - 120, 1);
  addFn(b, "new()", kNow / kBucketNs - 1, 1);
  s.write(b);
  EXPECT_EQ(s.purge(), 1);
  EXPECT_EQ(s.aggregateCount(), 1u);
}

TEST_P(StoreTest, DataSurvivesReopenAndSchemaIsMigratedOnce) {
  {
    Store s(opts());
    Batch b;
    addFn(b, "f()", kNow / kBucketNs, 7);
    s.write(b);
  }
  Store again(opts());
  EXPECT_EQ(again.aggregateCount(), 1u);
  EXPECT_EQ(again.cursor(), 1u);
}

TEST(Rfc3339, ParsesAndFormats) {
  EXPECT_EQ(formatRfc3339(0), "1970-01-01T00:00:00Z");
  auto t = parseRfc3339("2026-11-21T00:00:00Z");
  ASSERT_TRUE(t);
  EXPECT_EQ(formatRfc3339(*t), "2026-11-21T00:00:00Z");
  EXPECT_EQ(*parseRfc3339("2026-11-21T01:30:00+01:30"), *t);
  EXPECT_EQ(*parseRfc3339("2026-11-21T00:00:00.5Z"), *t + 500'000'000);
  EXPECT_FALSE(parseRfc3339("2026-13-01T00:00:00Z"));
  EXPECT_FALSE(parseRfc3339("yesterday"));
  EXPECT_FALSE(parseRfc3339("2026-11-21T00:00:00"));
}

}  // namespace
}  // namespace perfhat::handler
