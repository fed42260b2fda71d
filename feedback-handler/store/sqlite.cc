#include "feedback-handler/store/sqlite.h"

namespace perfhat::handler {

Db::Db(const std::string& path, int flags) {
  int rc = sqlite3_open_v2(path.c_str(), &db_, flags | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close(db_);
    db_ = nullptr;
    throw StoreError("cannot open store " + path + ": " + msg);
  }
  sqlite3_extended_result_codes(db_, 1);
}

Db::~Db() { sqlite3_close_v2(db_); }

Db& Db::operator=(Db&& o) noexcept {
  if (this != &o) {
    sqlite3_close_v2(db_);
    db_ = o.db_;
    o.db_ = nullptr;
  }
  return *this;
}

void Db::fail(const std::string& what) const {
  throw StoreError(what + ": " + (db_ ? sqlite3_errmsg(db_) : "no database"));
}

void Db::exec(const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "unknown error";
    sqlite3_free(err);
    throw StoreError(std::string("store: ") + msg);
  }
}

Stmt::Stmt(const Db& db, const char* sql) : db_(db) {
  if (sqlite3_prepare_v3(db.get(), sql, -1, SQLITE_PREPARE_PERSISTENT, &s_, nullptr) != SQLITE_OK) {
    db.fail("store: prepare failed");
  }
}

Stmt::~Stmt() { sqlite3_finalize(s_); }

Stmt& Stmt::bind(int i, int64_t v) {
  sqlite3_bind_int64(s_, i, v);
  return *this;
}
Stmt& Stmt::bind(int i, double v) {
  sqlite3_bind_double(s_, i, v);
  return *this;
}
Stmt& Stmt::bind(int i, std::string_view t) {
  sqlite3_bind_text(s_, i, t.data(), static_cast<int>(t.size()), SQLITE_TRANSIENT);
  return *this;
}
Stmt& Stmt::bindBlob(int i, std::string_view b) {
  sqlite3_bind_blob(s_, i, b.data(), static_cast<int>(b.size()), SQLITE_TRANSIENT);
  return *this;
}

Stmt& Stmt::bindRef(int i, std::string_view t) {
  sqlite3_bind_text(s_, i, t.data(), static_cast<int>(t.size()), SQLITE_STATIC);
  return *this;
}
Stmt& Stmt::bindBlobRef(int i, std::string_view b) {
  sqlite3_bind_blob(s_, i, b.data(), static_cast<int>(b.size()), SQLITE_STATIC);
  return *this;
}

bool Stmt::step() {
  int rc = sqlite3_step(s_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  std::string msg = sqlite3_errmsg(db_.get());
  sqlite3_reset(s_);
  throw StoreError("store: " + msg);
}

void Stmt::reset() {
  sqlite3_reset(s_);
  sqlite3_clear_bindings(s_);
}

std::string Stmt::text(int col) const {
  auto* p = reinterpret_cast<const char*>(sqlite3_column_text(s_, col));
  return p ? std::string(p, static_cast<size_t>(sqlite3_column_bytes(s_, col))) : std::string();
}

std::string_view Stmt::blob(int col) const {
  auto* p = static_cast<const char*>(sqlite3_column_blob(s_, col));
  return p ? std::string_view(p, static_cast<size_t>(sqlite3_column_bytes(s_, col)))
           : std::string_view();
}

Transaction::Transaction(Db& db, bool write) : db_(db) {
  db_.exec(write ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED");
}
Transaction::~Transaction() {
  if (!done_) sqlite3_exec(db_.get(), "ROLLBACK", nullptr, nullptr, nullptr);
}
void Transaction::commit() {
  db_.exec("COMMIT");
  done_ = true;
}

}  // namespace perfhat::handler
