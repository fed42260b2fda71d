// The store tests' fixture (store_test.cc, store_backend_test.cc): a fresh store per test in a
// temporary directory, on SQLite or on a real PostgreSQL server (one per test process,
// tests/support/postgres_server.h) with a database per store name.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>

#include "feedback-handler/store/sql.h"
#include "feedback-handler/store/store.h"
#include "tests/support/postgres_gtest.h"

namespace perfhat::handler::store_test {

namespace fs = std::filesystem;

inline constexpr int64_t kNow = 1'763'700'000'000'000'000LL;

// The store tests run on both backends: SQLite files, and a real PostgreSQL server (one per test
// process, tests/support/postgres_server.h) with a database per store name.
class StoreTestBase : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::replace(name.begin(), name.end(), '/', '_');
    dir_ = fs::temp_directory_path() /
           ("perfhat-store-test-" + std::to_string(::getpid()) + "-" + name);
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    if (backend_ == sql::Backend::kPostgres) PERFHAT_REQUIRE_POSTGRES(pg_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  StoreOptions opts(const std::string& name = "s.sqlite") {
    StoreOptions o;
    if (backend_ == sql::Backend::kPostgres) {
      auto [it, fresh] = databases_.try_emplace(name);
      if (fresh) it->second = pg_->createDatabase("store_" + std::to_string(next_database_++));
      o.path = it->second;
    } else {
      o.path = (dir_ / name).string();
    }
    o.now_ns = [this] { return now_; };
    return o;
  }
  sql::Backend backend_ = sql::Backend::kSqlite;
  fs::path dir_;
  int64_t now_ = kNow;
  std::map<std::string, std::string> databases_;  // store name → PostgreSQL URL
  perfhat::testing::PostgresServer* pg_ = nullptr;
  static inline int next_database_ = 0;
};

class StoreTest : public StoreTestBase, public ::testing::WithParamInterface<sql::Backend> {
 protected:
  StoreTest() { backend_ = GetParam(); }
};

class StoreSqliteTest : public StoreTestBase {};

class StorePostgresTest : public StoreTestBase {
 protected:
  StorePostgresTest() { backend_ = sql::Backend::kPostgres; }
};

inline void addFn(Batch& b, const std::string& key, int64_t bucket, double v, double w = 1,
                  const std::string& origin = "", const std::string& version = "1.0") {
  AggValue& a =
      b.aggregates[AggKey{AggKind::kFunction, key, "", bucket, "svc", version, "", origin}];
  a.sketch.add(v, w);
  b.functions[key].last_seen_ns = bucket * kBucketNs;
}

}  // namespace perfhat::handler::store_test
