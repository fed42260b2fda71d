// Minimal RAII over the SQLite C API: a connection and a prepared statement. Every failure is a
// StoreError carrying SQLite's message, so the HTTP layer can answer 503 with it.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "feedback-handler/store/store_error.h"

namespace perfhat::handler {

class Db {
 public:
  Db() = default;
  // flags: SQLITE_OPEN_* ; throws StoreError.
  Db(const std::string& path, int flags);
  ~Db();
  Db(Db&& o) noexcept : db_(o.db_) { o.db_ = nullptr; }
  Db& operator=(Db&& o) noexcept;
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  void exec(const char* sql);
  sqlite3* get() const { return db_; }
  [[noreturn]] void fail(const std::string& what) const;

 private:
  sqlite3* db_ = nullptr;
};

class Stmt {
 public:
  Stmt(const Db& db, const char* sql);
  ~Stmt();
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  Stmt& bind(int i, int64_t v);
  Stmt& bind(int i, double v);
  Stmt& bind(int i, std::string_view text);
  Stmt& bindBlob(int i, std::string_view blob);
  // Bind without copying (SQLITE_STATIC): the bytes must stay alive until the statement is
  // stepped to completion and rebound or reset. For hot loops that bind live strings.
  Stmt& bindRef(int i, std::string_view text);
  Stmt& bindBlobRef(int i, std::string_view blob);
  // sqlite3_reset only (bindings kept): for statements whose every parameter is rebound.
  void rewind() { sqlite3_reset(s_); }
  int64_t lastInsertRowid() const { return sqlite3_last_insert_rowid(db_.get()); }
  // True while a row is available; false when done. Throws StoreError on error.
  bool step();
  void reset();  // reset + clear bindings, ready for reuse
  int64_t i64(int col) const { return sqlite3_column_int64(s_, col); }
  double f64(int col) const { return sqlite3_column_double(s_, col); }
  std::string text(int col) const;
  std::string_view blob(int col) const;

 private:
  const Db& db_;
  sqlite3_stmt* s_ = nullptr;
};

// BEGIN IMMEDIATE (writes) or BEGIN DEFERRED (reads: one shared lock and one snapshot for many
// statements instead of a lock round trip per statement) … COMMIT; rolled back when destroyed
// without commit().
class Transaction {
 public:
  explicit Transaction(Db& db, bool write = true);
  ~Transaction();
  void commit();

 private:
  Db& db_;
  bool done_ = false;
};

}  // namespace perfhat::handler
