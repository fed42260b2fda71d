#include "feedback-handler/store/sql.h"

#include <cctype>
#include <string>

#include "feedback-handler/store/postgres.h"

namespace perfhat::handler::sql {
namespace {

// ---- SQLite: an adapter over sqlite.h, which stays the one place that calls the C API ----------

class SqliteStatement final : public Statement {
 public:
  SqliteStatement(const handler::Db& db, const char* sql) : s_(db, sql) {}
  void bind(int i, int64_t v) override { s_.bind(i, v); }
  void bind(int i, double v) override { s_.bind(i, v); }
  void bind(int i, std::string_view t) override { s_.bind(i, t); }
  void bindBlob(int i, std::string_view b) override { s_.bindBlob(i, b); }
  void bindRef(int i, std::string_view t) override { s_.bindRef(i, t); }
  void bindBlobRef(int i, std::string_view b) override { s_.bindBlobRef(i, b); }
  bool step() override { return s_.step(); }
  void reset() override { s_.reset(); }
  void rewind() override { s_.rewind(); }
  int64_t lastInsertRowid() const override { return s_.lastInsertRowid(); }
  int64_t i64(int col) const override { return s_.i64(col); }
  double f64(int col) const override { return s_.f64(col); }
  std::string text(int col) const override { return s_.text(col); }
  std::string_view blob(int col) const override { return s_.blob(col); }

 private:
  handler::Stmt s_;
};

class SqliteConnection final : public Connection {
 public:
  explicit SqliteConnection(const std::string& path)
      : path_(path), db_(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) {
    if (sqlite3_db_readonly(db_.get(), "main") == 1) {
      throw StoreError("store " + path + " is read-only (check file permissions)");
    }
    // Another process (a backup, the sqlite3 shell) may hold the lock for a moment.
    sqlite3_busy_timeout(db_.get(), 5000);
  }
  Backend backend() const override { return Backend::kSqlite; }
  void exec(const char* sql) override { db_.exec(sql); }
  std::unique_ptr<Statement> prepare(const char* sql) override {
    return std::make_unique<SqliteStatement>(db_, sql);
  }
  // Writes take the write lock up front (no lock upgrade that could fail with SQLITE_BUSY
  // mid-transaction); reads take one shared lock and one snapshot for many statements.
  void begin(bool write) override { db_.exec(write ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED"); }
  void commit() override { db_.exec("COMMIT"); }
  void rollback() noexcept override {
    sqlite3_exec(db_.get(), "ROLLBACK", nullptr, nullptr, nullptr);
  }
  int64_t changes() const override { return sqlite3_changes(db_.get()); }
  std::string describe() const override { return path_; }

 private:
  std::string path_;
  handler::Db db_;
};

// Calls code(i, n) for each stretch [i, i+n) of `sql` that is SQL code, and copy(i, n) for
// string literals, quoted identifiers and comments, in order.
template <typename Code, typename Other>
void scan(std::string_view sql, Code code, Other other) {
  size_t i = 0;
  while (i < sql.size()) {
    size_t start = i;
    const char c = sql[i];
    if (c == '\'' || c == '"') {
      // Quotes are escaped by doubling, which this loop treats as two adjacent literals.
      size_t end = sql.find(c, i + 1);
      i = end == std::string_view::npos ? sql.size() : end + 1;
    } else if (c == '-' && i + 1 < sql.size() && sql[i + 1] == '-') {
      size_t end = sql.find('\n', i);
      i = end == std::string_view::npos ? sql.size() : end;
    } else if (c == '/' && i + 1 < sql.size() && sql[i + 1] == '*') {
      size_t end = sql.find("*/", i + 2);
      i = end == std::string_view::npos ? sql.size() : end + 2;
    } else {
      while (i < sql.size() && sql[i] != '\'' && sql[i] != '"' &&
             !(sql[i] == '-' && i + 1 < sql.size() && sql[i + 1] == '-') &&
             !(sql[i] == '/' && i + 1 < sql.size() && sql[i + 1] == '*')) {
        ++i;
      }
      code(start, i - start);
      continue;
    }
    other(start, i - start);
  }
}

bool isWordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

bool equalsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::toupper(static_cast<unsigned char>(a[i])) != b[i]) return false;
  }
  return true;
}

}  // namespace

bool isPostgresTarget(std::string_view target) {
  return target.starts_with("postgresql://") || target.starts_with("postgres://");
}

bool isSqliteFile(std::string_view target) {
  return !target.empty() && !isPostgresTarget(target) && !target.starts_with(":memory:") &&
         !target.starts_with("file:");
}

Db Db::open(const std::string& target) {
  if (isPostgresTarget(target)) return Db(std::make_unique<PostgresConnection>(target));
  return Db(std::make_unique<SqliteConnection>(target));
}

std::string ddl(std::string_view sqlite_ddl, Backend backend) {
  if (backend == Backend::kSqlite) return std::string(sqlite_ddl);
  std::string out;
  out.reserve(sqlite_ddl.size() + 64);
  auto code = [&](size_t start, size_t n) {
    std::string_view s = sqlite_ddl.substr(start, n);
    size_t i = 0;
    while (i < s.size()) {
      if (!isWordChar(s[i])) {
        out += s[i++];
        continue;
      }
      size_t j = i;
      while (j < s.size() && isWordChar(s[j])) ++j;
      std::string_view word = s.substr(i, j - i);
      if (equalsIgnoreCase(word, "WITHOUT")) {
        // SQLite's `WITHOUT ROWID` table option: a PostgreSQL table is a heap with its primary
        // key a separate index either way, so the clause is dropped.
        size_t k = j;
        while (k < s.size() && std::isspace(static_cast<unsigned char>(s[k]))) ++k;
        size_t e = k;
        while (e < s.size() && isWordChar(s[e])) ++e;
        if (equalsIgnoreCase(s.substr(k, e - k), "ROWID")) {
          while (!out.empty() && std::isspace(static_cast<unsigned char>(out.back()))) {
            out.pop_back();
          }
          i = e;
          continue;
        }
      }
      if (equalsIgnoreCase(word, "INTEGER")) {
        out += "BIGINT";
      } else if (equalsIgnoreCase(word, "REAL")) {
        out += "DOUBLE PRECISION";
      } else if (equalsIgnoreCase(word, "BLOB")) {
        out += "BYTEA";
      } else {
        out += word;
      }
      i = j;
    }
  };
  scan(sqlite_ddl, code, [&](size_t start, size_t n) { out += sqlite_ddl.substr(start, n); });
  return out;
}

std::string jsonEach(Backend backend, int param) {
  const std::string p = "?" + std::to_string(param);
  if (backend == Backend::kSqlite) return "json_each(" + p + ")";
  return "(SELECT o - 1 AS key, v AS value FROM json_array_elements_text(CAST(" + p +
         " AS json)) WITH ORDINALITY AS e(v, o))";
}

std::string numberedPlaceholders(std::string_view sql, int* params) {
  std::string out;
  out.reserve(sql.size() + 16);
  int max_index = 0;
  auto code = [&](size_t start, size_t n) {
    std::string_view s = sql.substr(start, n);
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] != '?') {
        out += s[i];
        continue;
      }
      size_t j = i + 1;
      int index = 0;
      while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) {
        index = index * 10 + (s[j] - '0');
        if (index > 65535)
          throw StoreError("store: placeholder number too large in: " + std::string(sql));
        ++j;
      }
      if (j == i + 1) {
        index = max_index + 1;
      } else if (index == 0) {
        throw StoreError("store: placeholder ?0 in: " + std::string(sql));
      }
      max_index = std::max(max_index, index);
      out += '$';
      out += std::to_string(index);
      i = j - 1;
    }
  };
  scan(sql, code, [&](size_t start, size_t n) { out += sql.substr(start, n); });
  if (params) *params = max_index;
  return out;
}

}  // namespace perfhat::handler::sql
