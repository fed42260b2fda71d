// Test helper: a throwaway, real PostgreSQL server for one test suite.
//
// initdb into a fresh temp directory (trust authentication for the superuser `perfhat`, C locale,
// UTF-8), then `postgres` listening on a Unix socket in that directory and on 127.0.0.1 at a
// free port. PostgreSQL refuses to run as root, so under root (CI containers) both run as the
// `postgres` system user that Debian's postgresql package creates (scripts/install-deps.sh
// installs it), or `nobody` when that user is missing. Destruction stops the server (fast
// shutdown) and deletes the directory. The initdb result is kept once per user and server
// version as /tmp/perfhat-pg-template-UID-VERSION, so later servers start from a copy.
//
// Binaries: $PERFHAT_POSTGRES_BIN, else the newest /usr/lib/postgresql/<N>/bin, else the
// directory of `initdb` on PATH.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>

namespace perfhat::testing {

// The directory holding initdb and postgres, if any.
std::optional<std::filesystem::path> findPostgresBinDir();

// Why PostgreSQL tests are skipped: only when the binaries are absent AND PERFHAT_SKIP_POSTGRES=1;
// nullopt otherwise (a missing server is then a test failure, not a skip).
std::optional<std::string> postgresSkipReason();

class PostgresServer {
 public:
  // Throws std::runtime_error with the server's log when it cannot be started.
  PostgresServer();
  ~PostgresServer();
  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;

  int port() const { return port_; }
  // libpq URL of `database` over TCP as the trusted superuser.
  std::string url(const std::string& database = "postgres") const;
  // Creates an empty database (letters, digits, underscores) and returns its URL.
  std::string createDatabase(const std::string& name) const;
  // Fast shutdown; the data directory stays until destruction. Safe to call twice.
  void stop();
  // Starts a stopped server again on the same port and data.
  void start();
  bool running() const { return pid_ > 0; }

 private:
  void initData();
  void launch();

  std::filesystem::path bin_, dir_;
  uid_t uid_ = 0;
  gid_t gid_ = 0;
  int port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace perfhat::testing
