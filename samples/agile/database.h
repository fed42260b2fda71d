// A small SQLite access layer: a pool of connections, prepared statements with bound
// parameters, and a simulated network round trip per statement.
//
// The service's storage is real SQLite, but an on-disk SQLite in the same process answers in
// microseconds, while the database of a production service sits across the network. The round
// trip is added explicitly (a deterministic sleep) so the sample has realistic, reproducible
// access costs: N+1 query patterns cost what they cost in production.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;

namespace agile {

struct DatabaseConfig {
  std::string path;
  // Simulated client↔database round trip added to every statement.
  std::chrono::microseconds round_trip{300};
  // Connections in the pool; requests beyond this wait for a free one.
  int connections = 8;
};

class DatabaseError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

using SqlValue = std::variant<std::monostate, int64_t, double, std::string>;

// One result row, with typed accessors by column index.
class Row {
 public:
  explicit Row(std::vector<SqlValue> values) : values_(std::move(values)) {}
  int64_t integer(size_t column) const;
  double real(size_t column) const;
  std::string text(size_t column) const;
  size_t size() const { return values_.size(); }

 private:
  std::vector<SqlValue> values_;
};

class Database {
 public:
  explicit Database(DatabaseConfig config);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  // Runs one statement with positional parameters (?1, ?2, ...) and returns every row.
  std::vector<Row> query(const std::string& sql, const std::vector<SqlValue>& params = {}) const;
  // Runs a statement that returns no rows; returns the number of changed rows.
  int64_t execute(const std::string& sql, const std::vector<SqlValue>& params = {}) const;
  // Runs `body` inside one transaction on one connection, without simulated latency
  // (used for schema creation and seeding, not by request handling).
  void transaction(const std::function<void(sqlite3*)>& body);

  const DatabaseConfig& config() const { return config_; }
  uint64_t statementCount() const;

 private:
  sqlite3* acquire() const;
  void release(sqlite3* connection) const;
  std::vector<Row> run(sqlite3* connection, const std::string& sql,
                       const std::vector<SqlValue>& params, int64_t* changes) const;

  DatabaseConfig config_;
  mutable std::mutex mutex_;
  mutable std::condition_variable available_;
  mutable std::vector<sqlite3*> idle_;
  std::vector<sqlite3*> all_;
  mutable uint64_t statements_ = 0;
};

// Executes a statement on a raw connection (seeding and schema); throws DatabaseError.
void executeRaw(sqlite3* connection, const std::string& sql,
                const std::vector<SqlValue>& params = {});

}  // namespace agile
