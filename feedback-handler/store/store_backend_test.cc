// The store on one backend in particular: SQLite's schema migration, parallel reads and startup
// errors, and PostgreSQL shared by replicas. The tests on both backends: store_test.cc.
#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <set>
#include <thread>

#include "feedback-handler/store/store_test_fixture.h"
#include "feedback-handler/util/parallel.h"
#include "feedback-handler/util/rfc3339.h"
#include "tests/support/shipped_migrations.h"

namespace perfhat::handler {
namespace {

using namespace store_test;  // NOLINT(google-build-using-namespace): the fixture

// A store written by a binary of schema version 1 (aggregates in a rowid table, as shipped) is
// migrated on open to the clustered layout, keeping its rows: they read back, merge in place by
// primary key, and new rows insert beside them.
TEST_F(StoreSqliteTest, VersionOneStoreMigratesToClusteredAggregatesKeepingItsRows) {
  const std::string path = (dir_ / "v1.sqlite").string();
  const int64_t bucket = kNow / kBucketNs - 2;
  DDSketch old_sketch;
  for (int i = 1; i <= 10; ++i) old_sketch.add(1e6 * i);
  {
    sql::Db db = sql::Db::open(path);
    const auto migrations = perfhat::testing::shippedMigrations();
    ASSERT_GE(migrations.size(), 2u);
    db.exec(migrations[0].c_str());  // version 1, as a binary of that version created it
    db.exec(
        "CREATE TABLE schema_migrations(version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL);"
        "INSERT INTO schema_migrations VALUES(1, '2026-11-01T00:00:00Z');"
        "UPDATE meta SET value=3 WHERE name='seq';"
        "INSERT INTO functions(key, file, line, seq) VALUES('ns::old()', 'old.cc', 12, 3);");
    sql::Stmt ins(db,
                  "INSERT INTO aggregates VALUES('ns::old()', ?1, 'f', '', 'svc', '1.0', '', '', "
                  "?2, 0, 0, 0, 0, 3)");
    const std::string blob = old_sketch.serialize();
    ins.bind(1, bucket).bindBlob(2, blob);
    ins.step();
  }
  Store s(opts("v1.sqlite"));
  {
    sql::Db db = sql::Db::open(path);
    sql::Stmt q(db, "SELECT sql FROM sqlite_master WHERE name='aggregates'");
    ASSERT_TRUE(q.step());
    EXPECT_NE(q.text(0).find("WITHOUT ROWID"), std::string::npos) << q.text(0);
    sql::Stmt v(db, "SELECT MAX(version) FROM schema_migrations");
    ASSERT_TRUE(v.step());
    EXPECT_EQ(v.i64(0), static_cast<int64_t>(perfhat::testing::shippedMigrations().size()));
  }
  EXPECT_EQ(s.aggregateCount(), 1u);
  EXPECT_EQ(s.cursor(), 3u);
  Batch b;
  addFn(b, "ns::old()", bucket, 11e6);      // merges into the migrated row
  addFn(b, "ns::old()", bucket + 1, 12e6);  // a new row beside it
  s.write(b);
  EXPECT_EQ(s.aggregateCount(), 2u);
  BatchGetRequest req;
  req.keys = {"ns::old()"};
  BatchGetResponse r = s.batchGet(req);
  ASSERT_EQ(r.items.size(), 1u);
  EXPECT_EQ(r.items[0].file, "old.cc");
  ASSERT_TRUE(r.items[0].stats);
  EXPECT_EQ(r.items[0].stats->count, 12u);
  EXPECT_NEAR(r.items[0].stats->p50_ns, 6e6, 0.01 * 6e6);
}

// A large batchGet is read in chunks on parallel connections. The answer is the one a single
// thread gives, byte for byte: every row kind, callers inside and outside the request, keys
// asked twice or by mangled name, a damaged row, hosts, a baseline window and items on both
// sides of every chunk boundary.
TEST_F(StoreSqliteTest, ParallelChunksAnswerExactlyAsOneThread) {
  const int64_t bucket = kNow / kBucketNs - 30;
  constexpr int kKeys = 5000;
  auto key = [](int k) { return "chunk::fn" + std::to_string(k) + "(int)"; };
  {
    Store s(opts());
    Batch b;
    std::mt19937 rng(5);
    std::lognormal_distribution<double> lat(13, 1);
    for (int k = 0; k < kKeys; ++k) {
      for (int m = 0; m < 1 + k % 3; ++m) {
        AggValue& v = b.aggregates[AggKey{
            AggKind::kFunction, key(k), "", bucket - int64_t{60} * (m % 2) + m,
            "svc" + std::to_string(m % 2), "v" + std::to_string(k % 4), "", ""}];
        for (int i = 0; i < 1 + k % 7; ++i) v.sketch.add(lat(rng), 1 + (i % 3) * 0.5);
      }
      if (k % 5 == 0) {
        AggValue& c =
            b.aggregates[AggKey{AggKind::kCallSite, key(k), key((k * 7 + 1) % (2 * kKeys)), bucket,
                                "svc0", "v0", "", ""}];
        c.sketch.add(lat(rng));
        c.x1 = 3;
        c.x2 = 10;
        c.x3 = 2;
      }
      if (k % 11 == 0) {
        AggValue& l = b.aggregates[AggKey{AggKind::kLoop, key(k), std::to_string(k % 3), bucket,
                                          "svc0", "v0", "", ""}];
        l.sketch.add(1 + k % 9);
        l.line = 10 + k % 3;
      }
      if (k % 13 == 0) {
        b.aggregates[AggKey{AggKind::kResultSize, key(k), "", bucket, "svc0", "v0", "", ""}]
            .sketch.add(k % 50);
      }
      for (int h = 0; h < k % 3; ++h) b.hosts[{key(k), "host" + std::to_string(h)}] = kNow;
      b.functions[key(k)] = FunctionInfo{k % 17 == 0 ? "_Z5mangled" + std::to_string(k) : "",
                                         "/src/c.cc", k, bucket * kBucketNs};
    }
    s.write(b);
    sql::Db db = sql::Db::open(opts().path);
    sql::Stmt u(db, "UPDATE aggregates SET sketch=x'00' WHERE key=? AND kind='f'");
    u.bind(1, std::string_view(key(2049))).step();
  }
  // Every key once (its items need no reordering); the same with one key twice; and with keys
  // found only by their mangled name, and unknown keys.
  BatchGetRequest once;
  for (int k = kKeys - 1; k >= 0; --k) once.keys.push_back(key(k));
  once.baseline =
      TimeWindow{formatRfc3339(kNow - 180 * kBucketNs), formatRfc3339(kNow - 45 * kBucketNs)};
  BatchGetRequest twice = once;
  twice.keys.push_back(key(17));
  BatchGetRequest mixed = twice;
  mixed.keys.push_back("_Z5mangled34");
  mixed.keys.push_back("nope()");
  std::string answers[3][2];
  for (int threads : {1, 3}) {
    StoreOptions o = opts();
    o.read_threads = threads;
    Store s(o);
    int r = 0;
    for (const BatchGetRequest* req : {&once, &twice, &mixed}) {
      answers[r++][threads == 1 ? 0 : 1] = serialize(s.batchGet(*req));
    }
  }
  for (int r = 0; r < 3; ++r) {
    EXPECT_TRUE(answers[r][0] == answers[r][1])
        << "request " << r << ": answers differ in size " << answers[r][0].size() << " vs "
        << answers[r][1].size();
  }
  {  // On a caller's team (a server's, for the whole request) of fewer threads than chunks.
    StoreOptions o = opts();
    o.read_threads = 3;
    Store s(o);
    ChunkTeam team(2);
    for (int r = 0; r < 3; ++r) {
      const BatchGetRequest* req[] = {&once, &twice, &mixed};
      EXPECT_TRUE(serialize(s.batchGet(*req[r], &team)) == answers[r][0]) << "request " << r;
    }
  }
  EXPECT_GT(answers[0][0].size(), 1'000'000u);
  EXPECT_NE(answers[0][0].find("\"baseline\""), std::string::npos);
  EXPECT_NE(answers[0][0].find("\"hosts\":[\"host0\",\"host1\"]"), std::string::npos);
  EXPECT_EQ(answers[0][0], answers[1][0]);  // a repeated key is answered once, where first asked
  // Without data: the key whose rows are damaged, and the unknown one.
  EXPECT_NE(answers[2][0].find("\"missing\":[\"chunk::fn2049(int)\",\"nope()\"]"),
            std::string::npos);
}

TEST_F(StoreSqliteTest, NotADatabaseIsAClearStartupError) {
  std::ofstream(dir_ / "junk.sqlite") << std::string(8192, 'x');
  try {
    Store s(opts("junk.sqlite"));
    FAIL() << "expected StoreError";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("junk.sqlite"), std::string::npos) << e.what();
  }
  EXPECT_THROW(Store(opts("no/such/dir/s.sqlite")), StoreError);
}

// Deployed replicas behind a load balancer: two stores on one database, writing the same key and
// minute at the same time. Each writes its own partial rows; either reads the exact merge, and
// both hand out the same change sequence.
TEST_F(StorePostgresTest, ReplicasSharingADatabaseMergeOnRead) {
  Store a(opts()), b(opts());
  const int64_t bucket = kNow / kBucketNs - 1;
  constexpr int kWrites = 40;
  std::string errors[2];
  auto writer = [&](Store& s, int w) {
    try {
      for (int i = 0; i < kWrites; ++i) {
        Batch batch;
        addFn(batch, "shared()", bucket, 1000.0 * (w + 1) + i);
        batch.hosts[{"shared()", "host-" + std::to_string(w)}] = kNow;
        s.write(batch);
      }
    } catch (const std::exception& e) {
      errors[w] = e.what();
    }
  };
  std::thread ta(writer, std::ref(a), 0), tb(writer, std::ref(b), 1);
  ta.join();
  tb.join();
  ASSERT_EQ(errors[0], "");
  ASSERT_EQ(errors[1], "");
  for (Store* s : {&a, &b}) {
    auto r = s->batchGet(BatchGetRequest{{"shared()"}, std::nullopt, std::nullopt});
    ASSERT_EQ(r.items.size(), 1u);
    const Stats& st = *r.items[0].stats;
    EXPECT_EQ(st.count, 2u * kWrites);
    EXPECT_EQ(st.min_ns, 1000.0);
    EXPECT_EQ(st.max_ns, 2000.0 + kWrites - 1);
    EXPECT_EQ(r.items[0].hosts, (std::vector<std::string>{"host-0", "host-1"}));
    EXPECT_EQ(r.cursor, std::to_string(2 * kWrites));
  }
  // Partial rows: one per replica for the key and minute.
  ExportPage e = a.exportSince(0);
  std::set<std::string> origins;
  for (const auto& [k, v] : e.rows.aggregates) origins.insert(k.origin);
  EXPECT_EQ(origins.size(), 2u);
}

}  // namespace
}  // namespace perfhat::handler
