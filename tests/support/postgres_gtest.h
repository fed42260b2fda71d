// GoogleTest glue for tests that need a real PostgreSQL: one server per test process, started by
// the first test that asks (suites that never ask start nothing) and stopped at process exit.
//
//   void SetUp() override {
//     PERFHAT_REQUIRE_POSTGRES(server_);  // skips or fails the test when it cannot be used
//     url_ = server_->createDatabase(perfhat::testing::databaseNameForTest("t_"));
//   }
#pragma once

#include <gtest/gtest.h>

#include <cctype>
#include <memory>
#include <string>

#include "tests/support/postgres_server.h"

namespace perfhat::testing {

struct SharedPostgres {
  std::unique_ptr<PostgresServer> server;  // null when skipped or failed to start
  std::string skip;                        // why the tests are skipped (postgresSkipReason)
  std::string error;                       // why the server did not start
};

// The process's server; the first call starts it (a failed start is not retried).
inline SharedPostgres& sharedPostgres() {
  static SharedPostgres shared = [] {
    SharedPostgres s;
    if (auto why = postgresSkipReason()) {
      s.skip = *why;
      return s;
    }
    try {
      s.server = std::make_unique<PostgresServer>();
    } catch (const std::exception& e) {
      s.error = e.what();
    }
    return s;
  }();
  return shared;
}

// `prefix` + the running test's name, lower-cased with every other character an underscore: a
// valid, per-test database name.
inline std::string databaseNameForTest(const std::string& prefix) {
  std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  for (char& c : name) c = std::isalnum(static_cast<unsigned char>(c)) ? std::tolower(c) : '_';
  return prefix + name;
}

}  // namespace perfhat::testing

// Sets `out` (a PostgresServer*) to the shared server, or skips the test (binaries absent and
// PERFHAT_SKIP_POSTGRES=1) or fails it (the server did not start). For SetUp() or a test body.
#define PERFHAT_REQUIRE_POSTGRES(out)                                                           \
  do {                                                                                          \
    ::perfhat::testing::SharedPostgres& perfhat_pg_ = ::perfhat::testing::sharedPostgres();     \
    if (!perfhat_pg_.skip.empty()) GTEST_SKIP() << perfhat_pg_.skip;                            \
    ASSERT_NE(perfhat_pg_.server, nullptr) << "cannot start PostgreSQL: " << perfhat_pg_.error; \
    (out) = perfhat_pg_.server.get();                                                           \
  } while (0)
