#include "samples/agile/database.h"

#include <sqlite3.h>

#include <thread>

namespace agile {
namespace {

void bind(sqlite3* connection, sqlite3_stmt* statement, const std::vector<SqlValue>& params) {
  for (size_t i = 0; i < params.size(); ++i) {
    const int index = static_cast<int>(i) + 1;
    int rc = SQLITE_OK;
    if (const auto* v = std::get_if<int64_t>(&params[i])) {
      rc = sqlite3_bind_int64(statement, index, *v);
    } else if (const auto* d = std::get_if<double>(&params[i])) {
      rc = sqlite3_bind_double(statement, index, *d);
    } else if (const auto* s = std::get_if<std::string>(&params[i])) {
      rc = sqlite3_bind_text(statement, index, s->data(), static_cast<int>(s->size()),
                             SQLITE_TRANSIENT);
    } else {
      rc = sqlite3_bind_null(statement, index);
    }
    if (rc != SQLITE_OK) throw DatabaseError(std::string("bind: ") + sqlite3_errmsg(connection));
  }
}

std::vector<Row> step(sqlite3* connection, sqlite3_stmt* statement) {
  std::vector<Row> rows;
  while (true) {
    const int rc = sqlite3_step(statement);
    if (rc == SQLITE_DONE) break;
    if (rc != SQLITE_ROW) throw DatabaseError(std::string("step: ") + sqlite3_errmsg(connection));
    const int columns = sqlite3_column_count(statement);
    std::vector<SqlValue> values;
    values.reserve(columns);
    for (int c = 0; c < columns; ++c) {
      switch (sqlite3_column_type(statement, c)) {
        case SQLITE_INTEGER:
          values.emplace_back(int64_t{sqlite3_column_int64(statement, c)});
          break;
        case SQLITE_FLOAT:
          values.emplace_back(sqlite3_column_double(statement, c));
          break;
        case SQLITE_NULL:
          values.emplace_back(std::monostate{});
          break;
        default:
          values.emplace_back(
              std::string(reinterpret_cast<const char*>(sqlite3_column_text(statement, c)),
                          static_cast<size_t>(sqlite3_column_bytes(statement, c))));
      }
    }
    rows.emplace_back(std::move(values));
  }
  return rows;
}

}  // namespace

int64_t Row::integer(size_t column) const {
  const SqlValue& v = values_.at(column);
  if (const auto* i = std::get_if<int64_t>(&v)) return *i;
  if (const auto* d = std::get_if<double>(&v)) return static_cast<int64_t>(*d);
  return 0;
}

double Row::real(size_t column) const {
  const SqlValue& v = values_.at(column);
  if (const auto* d = std::get_if<double>(&v)) return *d;
  if (const auto* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
  return 0;
}

std::string Row::text(size_t column) const {
  const SqlValue& v = values_.at(column);
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  if (const auto* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  return {};
}

Database::Database(DatabaseConfig config) : config_(std::move(config)) {
  if (config_.connections < 1) config_.connections = 1;
  for (int i = 0; i < config_.connections; ++i) {
    sqlite3* connection = nullptr;
    const int rc =
        sqlite3_open_v2(config_.path.c_str(), &connection,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
    if (rc != SQLITE_OK) {
      std::string message = connection ? sqlite3_errmsg(connection) : "out of memory";
      sqlite3_close(connection);
      for (sqlite3* c : all_) sqlite3_close(c);
      throw DatabaseError("cannot open " + config_.path + ": " + message);
    }
    sqlite3_busy_timeout(connection, 5000);
    all_.push_back(connection);
  }
  executeRaw(all_.front(), "PRAGMA journal_mode=WAL");
  // WAL with NORMAL sync is durable across process crashes, and keeps writes from costing an
  // fsync each (the sample models a database server, not a disk).
  for (sqlite3* c : all_) executeRaw(c, "PRAGMA synchronous=NORMAL");
  idle_ = all_;
}

Database::~Database() {
  for (sqlite3* c : all_) sqlite3_close(c);
}

sqlite3* Database::acquire() const {
  std::unique_lock lock(mutex_);
  available_.wait(lock, [&] { return !idle_.empty(); });
  sqlite3* connection = idle_.back();
  idle_.pop_back();
  ++statements_;
  return connection;
}

void Database::release(sqlite3* connection) const {
  {
    std::lock_guard lock(mutex_);
    idle_.push_back(connection);
  }
  available_.notify_one();
}

uint64_t Database::statementCount() const {
  std::lock_guard lock(mutex_);
  return statements_;
}

std::vector<Row> Database::run(sqlite3* connection, const std::string& sql,
                               const std::vector<SqlValue>& params, int64_t* changes) const {
  sqlite3_stmt* statement = nullptr;
  if (sqlite3_prepare_v2(connection, sql.c_str(), -1, &statement, nullptr) != SQLITE_OK) {
    throw DatabaseError("prepare '" + sql + "': " + sqlite3_errmsg(connection));
  }
  try {
    bind(connection, statement, params);
    std::vector<Row> rows = step(connection, statement);
    if (changes) *changes = sqlite3_changes(connection);
    sqlite3_finalize(statement);
    return rows;
  } catch (...) {
    sqlite3_finalize(statement);
    throw;
  }
}

std::vector<Row> Database::query(const std::string& sql,
                                 const std::vector<SqlValue>& params) const {
  sqlite3* connection = acquire();
  try {
    // The round trip is spent while holding the connection, as a networked client would.
    std::this_thread::sleep_for(config_.round_trip);
    std::vector<Row> rows = run(connection, sql, params, nullptr);
    release(connection);
    return rows;
  } catch (...) {
    release(connection);
    throw;
  }
}

int64_t Database::execute(const std::string& sql, const std::vector<SqlValue>& params) const {
  sqlite3* connection = acquire();
  try {
    std::this_thread::sleep_for(config_.round_trip);
    int64_t changes = 0;
    run(connection, sql, params, &changes);
    release(connection);
    return changes;
  } catch (...) {
    release(connection);
    throw;
  }
}

void Database::transaction(const std::function<void(sqlite3*)>& body) {
  sqlite3* connection = acquire();
  try {
    executeRaw(connection, "BEGIN IMMEDIATE");
    body(connection);
    executeRaw(connection, "COMMIT");
    release(connection);
  } catch (...) {
    sqlite3_exec(connection, "ROLLBACK", nullptr, nullptr, nullptr);
    release(connection);
    throw;
  }
}

void executeRaw(sqlite3* connection, const std::string& sql, const std::vector<SqlValue>& params) {
  sqlite3_stmt* statement = nullptr;
  if (sqlite3_prepare_v2(connection, sql.c_str(), -1, &statement, nullptr) != SQLITE_OK) {
    throw DatabaseError("prepare '" + sql + "': " + sqlite3_errmsg(connection));
  }
  try {
    bind(connection, statement, params);
    step(connection, statement);
  } catch (...) {
    sqlite3_finalize(statement);
    throw;
  }
  sqlite3_finalize(statement);
}

}  // namespace agile
