// PostgreSQL backend of sql.h (libpq), for several deployed handler replicas sharing one store
// (DESIGN §5 "Storage").
//
// Statements: `?`/`?N` become `$N` once, and each distinct SQL text is prepared once per
// connection under a generated name; the server's inferred parameter types decide the wire
// format (int8, float8, bytea and text-like values binary, so bound views need no terminating
// NUL; other types as NUL-terminated text). Results come back in text format (exact for floats
// since PostgreSQL 12, universal for every column type) and bytea is hex-decoded. A whole
// result is fetched by the first step(), so statements may interleave.
//
// Transactions: a write transaction is READ COMMITTED plus a transaction-scoped advisory lock,
// the equivalent of SQLite's BEGIN IMMEDIATE: writers of all replicas take turns, so the
// read-increment-write of meta.seq never loses an update, never fails with a serialization
// error (nothing to retry), and sequence numbers commit in increasing order (a reader that has
// seen cursor N never later sees a commit with a sequence ≤ N). A read transaction is
// REPEATABLE READ READ ONLY: one snapshot, never a serialization failure.
//
// Connection loss: the failing call throws StoreError (the HTTP layer answers 503, OTLP clients
// retry); the next call outside a transaction reconnects and re-prepares its statements.
// Named prepared statements need a session: behind PgBouncer use session pooling.
#pragma once

#include <libpq-fe.h>

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "feedback-handler/store/sql.h"

namespace perfhat::handler::sql {

class PostgresConnection final : public Connection {
 public:
  // `url`: a libpq connection URI (postgresql://user[:password]@host[:port]/db?param=value).
  // Throws StoreError naming the URL (password redacted) and the reason: server not reachable,
  // authentication failed, no such database.
  explicit PostgresConnection(const std::string& url);
  ~PostgresConnection() override;
  PostgresConnection(const PostgresConnection&) = delete;
  PostgresConnection& operator=(const PostgresConnection&) = delete;

  Backend backend() const override { return Backend::kPostgres; }
  void exec(const char* sql) override;
  std::unique_ptr<Statement> prepare(const char* sql) override;
  void begin(bool write) override;
  void commit() override;
  void rollback() noexcept override;
  int64_t changes() const override { return changes_; }
  std::string describe() const override { return describe_; }

  // For statements of this connection.
  struct Prepared {
    std::string name;
    std::vector<Oid> param_types;  // as inferred by the server
  };
  // The prepared form of `pg_sql` ($N placeholders), preparing it on first use. The reference
  // stays valid until the connection is re-established (see generation()).
  const Prepared& prepared(const std::string& pg_sql);
  // Changes when the connection was re-established and every statement must be prepared again.
  uint64_t generation() const { return generation_; }
  // Reconnects a dropped connection when no transaction is open.
  void ensureConnected();
  PGconn* raw() const { return conn_; }
  void setChanges(int64_t n) { changes_ = n; }
  // Throws StoreError with the server's message (and SQLSTATE) from `r`, or the connection's.
  [[noreturn]] void fail(const std::string& what, const PGresult* r) const;

 private:
  void setUpSession();

  PGconn* conn_ = nullptr;
  std::string describe_;
  bool in_tx_ = false;
  int64_t changes_ = 0;
  uint64_t generation_ = 0;
  int next_name_ = 0;
  std::unordered_map<std::string, Prepared> prepared_;
};

// `url` with any password (user:password@ or password=) replaced by ***.
std::string redactPostgresUrl(const std::string& url);

}  // namespace perfhat::handler::sql
