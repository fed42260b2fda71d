// Backend-neutral SQL access for the feedback store (DESIGN §5 "Storage"): the same calls as
// sqlite.h (Db::exec, Stmt(db, sql) + bind/step/reset/column getters, Transaction(db, write)),
// so the store switches backends by changing type names only.
//
// Db::open(target) picks the backend: a `postgresql://` or `postgres://` URL opens PostgreSQL
// (postgres.h), anything else is a SQLite file path. SQL text uses SQLite's `?` / `?N`
// placeholders; the PostgreSQL backend rewrites them to `$N` once, when it prepares the statement.
//
// Cost on the SQLite hot path: one virtual call per bind/step/column on top of the SQLite call
// itself (the handle classes below are thin inline forwarders).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "feedback-handler/store/sqlite.h"
#include "feedback-handler/store/store_error.h"

namespace perfhat::handler::sql {

enum class Backend { kSqlite, kPostgres };

// True for the targets Db::open hands to PostgreSQL.
bool isPostgresTarget(std::string_view target);
// True for a SQLite database in a plain file (not PostgreSQL, not in memory, not a file: URI):
// one that other connections and a file beside it can share.
bool isSqliteFile(std::string_view target);

// The prepared statement of one backend. Column getters are valid after step() returned true;
// text/blob views stay valid until the next step() or reset(). Unbound parameters are NULL.
class Statement {
 public:
  virtual ~Statement() = default;
  virtual void bind(int i, int64_t v) = 0;
  virtual void bind(int i, double v) = 0;
  virtual void bind(int i, std::string_view text) = 0;
  virtual void bindBlob(int i, std::string_view blob) = 0;
  // Without a copy: the bytes must stay alive until the statement is stepped to completion and
  // rebound or reset.
  virtual void bindRef(int i, std::string_view text) = 0;
  virtual void bindBlobRef(int i, std::string_view blob) = 0;
  virtual bool step() = 0;
  virtual void reset() = 0;   // ready for reuse, bindings cleared
  virtual void rewind() = 0;  // ready for reuse, bindings kept
  // SQLite's rowid of the last row this connection inserted; PostgreSQL has none (throws).
  virtual int64_t lastInsertRowid() const = 0;
  virtual int64_t i64(int col) const = 0;
  virtual double f64(int col) const = 0;
  virtual std::string text(int col) const = 0;
  virtual std::string_view blob(int col) const = 0;
};

// One connection of one backend. Not thread-safe (the store serializes its use).
class Connection {
 public:
  virtual ~Connection() = default;
  virtual Backend backend() const = 0;
  // Runs one or more statements without parameters or results.
  virtual void exec(const char* sql) = 0;
  // Throws StoreError when the SQL does not compile on this backend.
  virtual std::unique_ptr<Statement> prepare(const char* sql) = 0;
  // write: the only writer until commit (SQLite BEGIN IMMEDIATE; PostgreSQL takes a
  // transaction-scoped advisory lock), so read-modify-write of counters cannot lose updates.
  // read: one consistent snapshot for several statements.
  virtual void begin(bool write) = 0;
  virtual void commit() = 0;
  virtual void rollback() noexcept = 0;
  // Rows inserted, updated or deleted by the last statement that finished.
  virtual int64_t changes() const = 0;
  // Where the data lives, for error messages (a PostgreSQL password is never included).
  virtual std::string describe() const = 0;
};

class Db {
 public:
  Db() = default;
  explicit Db(std::unique_ptr<Connection> c) : c_(std::move(c)) {}
  // Opens (creating a SQLite file when absent) a path or PostgreSQL URL; throws StoreError with
  // a message naming the target and the reason (server down, authentication, no such database,
  // not a SQLite database, read-only file).
  static Db open(const std::string& target);

  void exec(const char* sql) { c_->exec(sql); }
  Backend backend() const { return c_->backend(); }
  int64_t changes() const { return c_->changes(); }
  std::string describe() const { return c_->describe(); }
  Connection& connection() const { return *c_; }

 private:
  std::unique_ptr<Connection> c_;
};

class Stmt {
 public:
  Stmt(const Db& db, const char* sql) : s_(db.connection().prepare(sql)) {}

  Stmt& bind(int i, int64_t v) {
    s_->bind(i, v);
    return *this;
  }
  Stmt& bind(int i, double v) {
    s_->bind(i, v);
    return *this;
  }
  Stmt& bind(int i, std::string_view text) {
    s_->bind(i, text);
    return *this;
  }
  Stmt& bindBlob(int i, std::string_view blob) {
    s_->bindBlob(i, blob);
    return *this;
  }
  Stmt& bindRef(int i, std::string_view text) {
    s_->bindRef(i, text);
    return *this;
  }
  Stmt& bindBlobRef(int i, std::string_view blob) {
    s_->bindBlobRef(i, blob);
    return *this;
  }
  // True while a row is available; false when done. Throws StoreError on error.
  bool step() { return s_->step(); }
  void reset() { s_->reset(); }    // reset + clear bindings, ready for reuse
  void rewind() { s_->rewind(); }  // reset only: for statements whose every parameter is rebound
  int64_t lastInsertRowid() const { return s_->lastInsertRowid(); }
  int64_t i64(int col) const { return s_->i64(col); }
  double f64(int col) const { return s_->f64(col); }
  std::string text(int col) const { return s_->text(col); }
  std::string_view blob(int col) const { return s_->blob(col); }

 private:
  std::unique_ptr<Statement> s_;
};

// begin(write) … commit(); rolled back when destroyed without commit().
class Transaction {
 public:
  explicit Transaction(Db& db, bool write = true) : c_(db.connection()) { c_.begin(write); }
  ~Transaction() {
    if (!done_) c_.rollback();
  }
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit() {
    c_.commit();
    done_ = true;
  }

 private:
  Connection& c_;
  bool done_ = false;
};

// The schema DDL for a backend. Migrations are written with SQLite's type names; PostgreSQL gets
// INTEGER → BIGINT (SQLite integers are 64-bit), REAL → DOUBLE PRECISION (SQLite reals are
// doubles) and BLOB → BYTEA, and SQLite's `WITHOUT ROWID` table option is dropped. Words inside
// string literals, quoted identifiers and comments are left alone.
std::string ddl(std::string_view sqlite_ddl, Backend backend);

// A table of the elements of the JSON array bound to parameter `param`, with columns `key` (the
// 0-based index) and `value` (the element as text): SQLite's json_each(?N); on PostgreSQL
// json_array_elements_text WITH ORDINALITY. Lets one statement take a whole list of keys.
std::string jsonEach(Backend backend, int param);

// SQLite placeholders (`?`, `?N`) as PostgreSQL's `$N`; a bare `?` is one more than the largest
// number so far, as in SQLite. *params receives the number of parameters. Placeholders inside
// string literals, quoted identifiers and comments are left alone.
std::string numberedPlaceholders(std::string_view sql, int* params);

}  // namespace perfhat::handler::sql
