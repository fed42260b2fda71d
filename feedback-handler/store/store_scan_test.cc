// Store::scanCallRows (the rows dynamic metrics are derived from) on both backends: the kinds,
// service, version and window it selects, the function keys it calls known, and that the rows of
// several origins (replicas) all come back to be merged.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <set>

#include "common/test_units.h"
#include "feedback-handler/store/store.h"
#include "tests/support/postgres_gtest.h"

namespace perfhat::handler {
namespace {

namespace fs = std::filesystem;
using perfhat::test_units::kNow;
constexpr int64_t kBucket = kNow / kBucketNs - 3;

class StoreScan : public ::testing::TestWithParam<sql::Backend> {
 protected:
  void SetUp() override {
    if (GetParam() == sql::Backend::kPostgres) {
      PERFHAT_REQUIRE_POSTGRES(pg_);
      options_.path = pg_->createDatabase(perfhat::testing::databaseNameForTest("scan_"));
    } else {
      dir_ = fs::temp_directory_path() / ("perfhat-scan-" + std::to_string(::getpid()));
      fs::create_directories(dir_);
      options_.path = (dir_ / "s.sqlite").string();
    }
    options_.now_ns = [] { return kNow; };
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  StoreOptions options_;
  fs::path dir_;
  perfhat::testing::PostgresServer* pg_ = nullptr;
};

INSTANTIATE_TEST_SUITE_P(Backends, StoreScan,
                         ::testing::Values(sql::Backend::kSqlite, sql::Backend::kPostgres),
                         [](const auto& info) {
                           return info.param == sql::Backend::kSqlite ? "Sqlite" : "Postgres";
                         });

void put(Batch& b, AggKind kind, const std::string& key, const std::string& sub, int64_t bucket,
         const std::string& service, const std::string& version, const std::string& origin,
         double calls) {
  b.aggregates[AggKey{kind, key, sub, bucket, service, version, "", origin}].sketch.add(1000,
                                                                                        calls);
  b.functions[key].last_seen_ns = bucket * kBucketNs;
}

TEST_P(StoreScan, RowsAndKnownKeys) {
  Store s(options_);
  Batch b;
  put(b, AggKind::kFunction, "f", "", kBucket, "svc", "1", "", 3);
  put(b, AggKind::kFunction, "f", "", kBucket, "svc", "1", "replica-b", 4);  // another origin
  put(b, AggKind::kCallSite, "g", "f", kBucket, "svc", "1", "", 5);
  put(b, AggKind::kSelfTime, "f", "", kBucket, "svc", "2", "", 6);
  put(b, AggKind::kLoop, "f", "0", kBucket, "svc", "1", "", 7);       // not a call row
  put(b, AggKind::kFunction, "h", "", kBucket, "other", "1", "", 8);  // other service
  put(b, AggKind::kFunction, "old", "", kBucket - 2 * 24 * 60, "svc", "1", "", 9);  // 2 days ago
  s.write(b, WriteMode::kReplace);

  auto scan = [&](const std::string& service, const std::string& version) {
    std::multiset<std::string> rows;
    std::set<std::string> known;
    double calls = 0;
    s.scanCallRows(
        service, version, std::nullopt,
        [&](const Store::CallRow& r) {
          rows.insert(std::string(1, static_cast<char>(r.kind)) + " " + std::string(r.key) + " " +
                      std::string(r.sub));
          EXPECT_EQ(r.bucket, kBucket);
          calls += r.sketch.count();
        },
        [&](std::string_view k) { known.emplace(k); });
    return std::tuple(rows, known, calls);
  };
  auto [rows, known, calls] = scan("svc", "");
  EXPECT_EQ(rows, (std::multiset<std::string>{"f f ", "f f ", "c g f", "t f "}));
  EXPECT_EQ(calls, 3 + 4 + 5 + 6);
  EXPECT_EQ(known, (std::set<std::string>{"f", "old"}));  // keys with function rows of svc
  std::tie(rows, known, calls) = scan("svc", "2");
  EXPECT_EQ(rows, (std::multiset<std::string>{"t f "}));
  EXPECT_TRUE(known.empty());  // no function rows of version 2
  std::tie(rows, known, calls) = scan("", "");
  EXPECT_EQ(rows.count("f h "), 1u);
  EXPECT_EQ(known, (std::set<std::string>{"f", "g", "h", "old"}));  // every stored function
}

}  // namespace
}  // namespace perfhat::handler
