#include "feedback-handler/store/postgres.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "common/from_chars_whole.h"

namespace perfhat::handler::sql {
namespace {

// Type OIDs from PostgreSQL's pg_type.dat (stable across versions).
constexpr Oid kBoolOid = 16, kByteaOid = 17, kNameOid = 19, kInt8Oid = 20, kTextOid = 25,
              kJsonOid = 114, kFloat8Oid = 701, kBpcharOid = 1042, kVarcharOid = 1043;

// Types whose binary wire format is the raw bytes: sent binary, a value needs no terminating
// NUL (libpq takes text-format values as C strings and ignores their length).
bool rawBytesType(Oid t) {
  return t == kByteaOid || t == kTextOid || t == kVarcharOid || t == kBpcharOid || t == kNameOid ||
         t == kJsonOid;
}

// Key of the advisory lock write transactions hold ("perfhat" in ASCII).
constexpr const char* kBeginWrite =
    "BEGIN ISOLATION LEVEL READ COMMITTED; SELECT pg_advisory_xact_lock(31654216818061684)";
constexpr const char* kBeginRead = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY";

struct ResultDeleter {
  void operator()(PGresult* r) const { PQclear(r); }
};
using Result = std::unique_ptr<PGresult, ResultDeleter>;

// libpq messages end in a newline and may span lines ("\n\tIs the server running …").
std::string oneLine(std::string_view s) {
  std::string out;
  bool space = false;
  for (char c : s) {
    if (c == '\n' || c == '\t' || c == '\r' || c == ' ') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

// Why a connection attempt failed, in the words an operator searches for.
std::string connectFailureKind(const std::string& msg) {
  if (msg.find("database \"") != std::string::npos &&
      msg.find("does not exist") != std::string::npos) {
    return "no such database";
  }
  for (const char* auth : {"password authentication failed", "pg_hba.conf", "authentication",
                           "role \"", "no password supplied", "Peer authentication"}) {
    if (msg.find(auth) != std::string::npos) return "authentication failed";
  }
  for (const char* down : {"Connection refused", "No such file or directory", "timeout expired",
                           "could not translate host name", "server closed the connection",
                           "Network is unreachable", "No route to host", "the database system"}) {
    if (msg.find(down) != std::string::npos) return "server not reachable";
  }
  return "connection failed";
}

void putBigEndian(std::string& out, uint64_t v) {
  out.resize(8);
  for (int i = 7; i >= 0; --i) {
    out[static_cast<size_t>(i)] = static_cast<char>(v & 0xff);
    v >>= 8;
  }
}

int hexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

class PostgresStatement final : public Statement {
 public:
  PostgresStatement(PostgresConnection& c, const char* sql)
      : c_(c), sql_(sql), pg_sql_(numberedPlaceholders(sql, &nparams_)) {
    c_.ensureConnected();
    adopt(c_.prepared(pg_sql_));
    // The server may infer fewer parameters than the text names (e.g. none for `?1` in a comment
    // would not count); size the buffers to what it will accept.
    nparams_ = static_cast<int>(types_.size());
    const auto n = static_cast<size_t>(nparams_);
    own_.resize(n);
    ptr_.assign(n, nullptr);
    len_.assign(n, 0);
    binary_.assign(n, 0);
  }

  void bind(int i, int64_t v) override {
    std::string& out = own(i);
    if (type(i) == kInt8Oid) {
      putBigEndian(out, static_cast<uint64_t>(v));
      set(i, out, true);
    } else {
      out = std::to_string(v);  // text: the server converts to int4, numeric, float8 …
      set(i, out, false);
    }
  }
  void bind(int i, double v) override {
    std::string& out = own(i);
    if (type(i) == kFloat8Oid) {
      putBigEndian(out, std::bit_cast<uint64_t>(v));
      set(i, out, true);
    } else {
      char buf[32];
      auto r = std::to_chars(buf, buf + sizeof buf, v);  // shortest exact representation
      out.assign(buf, r.ptr);
      set(i, out, false);
    }
  }
  void bind(int i, std::string_view t) override { bindBytes(i, own(i).assign(t)); }
  void bindBlob(int i, std::string_view b) override { bindBytes(i, own(i).assign(b)); }
  void bindRef(int i, std::string_view t) override { bindBytes(i, t); }
  void bindBlobRef(int i, std::string_view b) override { bindBytes(i, b); }

  bool step() override {
    if (!res_) {
      if (done_) return false;
      execute();
      return row_ < rows_;
    }
    if (row_ < rows_) ++row_;
    return row_ < rows_;
  }

  void reset() override {
    rewind();
    std::fill(ptr_.begin(), ptr_.end(), nullptr);
  }

  void rewind() override {
    res_.reset();
    done_ = false;
    row_ = rows_ = 0;
  }

  int64_t lastInsertRowid() const override {
    throw StoreError("store: PostgreSQL tables have no rowid (use the primary key): " + sql_);
  }

  int64_t i64(int col) const override {
    if (!has(col)) return 0;
    const std::string_view v = cell(col);
    int64_t out = 0;
    if (fromCharsWhole(v, out)) return out;
    if (PQftype(res_.get(), col) == kBoolOid) return !v.empty() && v[0] == 't' ? 1 : 0;
    return static_cast<int64_t>(f64(col));  // a float or numeric column read as an integer
  }

  double f64(int col) const override {
    if (!has(col)) return 0;
    const std::string_view v = cell(col);
    double out = 0;
    const auto r = std::from_chars(v.data(), v.data() + v.size(), out);
    return r.ec == std::errc() ? out : 0;
  }

  std::string text(int col) const override {
    if (!has(col)) return {};
    return std::string(cell(col));
  }

  std::string_view blob(int col) const override {
    if (!has(col)) return {};
    const std::string_view cell_text = cell(col);
    const char* v = cell_text.data();
    const size_t n = cell_text.size();
    if (PQftype(res_.get(), col) != kByteaOid) return cell_text;
    // bytea in text format is "\x" + hex (bytea_output=hex is set per session).
    if (n < 2 || v[0] != '\\' || v[1] != 'x') {
      throw StoreError("store: unexpected bytea encoding in column " + std::to_string(col));
    }
    if (decoded_.size() < static_cast<size_t>(PQnfields(res_.get()))) {
      decoded_.resize(static_cast<size_t>(PQnfields(res_.get())));
    }
    std::string& out = decoded_[static_cast<size_t>(col)];
    out.resize((n - 2) / 2);
    for (size_t i = 0; i < out.size(); ++i) {
      out[i] = static_cast<char>(hexValue(v[2 + 2 * i]) << 4 | hexValue(v[3 + 2 * i]));
    }
    return out;
  }

 private:
  // Column col of the current row as libpq holds it (text format).
  std::string_view cell(int col) const {
    return {PQgetvalue(res_.get(), row_, col),
            static_cast<size_t>(PQgetlength(res_.get(), row_, col))};
  }

  // The statement's own buffer for parameter i (1-based), after a range check.
  std::string& own(int i) {
    if (i < 1 || i > nparams_) {
      throw StoreError("store: parameter " + std::to_string(i) + " out of range (statement has " +
                       std::to_string(nparams_) + "): " + sql_);
    }
    return own_[static_cast<size_t>(i - 1)];
  }
  void set(int i, std::string_view bytes, bool binary) {
    const auto k = static_cast<size_t>(i - 1);
    ptr_[k] = bytes.data() ? bytes.data() : "";  // an empty value is not NULL
    len_[k] = static_cast<int>(bytes.size());
    binary_[k] = binary ? 1 : 0;
  }
  Oid type(int i) const { return types_[static_cast<size_t>(i - 1)]; }
  // Copies, not a pointer: a reconnect drops the connection's table of prepared statements.
  void adopt(const PostgresConnection::Prepared& p) {
    name_ = p.name;
    types_ = p.param_types;
    generation_ = c_.generation();
  }

  void bindBytes(int i, std::string_view b) {
    std::string& copy = own(i);
    if (type(i) == kByteaOid) {
      set(i, b, true);  // raw bytes, zeros included
      return;
    }
    if (b.find('\0') != std::string_view::npos) {
      throw StoreError("store: parameter " + std::to_string(i) +
                       " contains a NUL byte, which PostgreSQL text cannot hold: " + sql_);
    }
    if (rawBytesType(type(i))) {
      set(i, b, true);
    } else {  // another type parses the text: a NUL-terminated copy
      if (copy.data() != b.data()) copy.assign(b);
      set(i, copy, false);
    }
  }

  bool has(int col) const {
    return res_ && row_ < rows_ && col >= 0 && col < PQnfields(res_.get()) &&
           !PQgetisnull(res_.get(), row_, col);
  }

  void execute() {
    c_.ensureConnected();
    if (generation_ != c_.generation()) {
      adopt(c_.prepared(pg_sql_));  // reconnected: prepare again on the new session
    }
    res_.reset(PQexecPrepared(c_.raw(), name_.c_str(), nparams_, ptr_.data(), len_.data(),
                              binary_.data(), /*resultFormat=*/0));
    const ExecStatusType st = res_ ? PQresultStatus(res_.get()) : PGRES_FATAL_ERROR;
    // Rows changed, as sqlite3_changes counts them: DML (also with RETURNING), not SELECT.
    if (st == PGRES_COMMAND_OK ||
        (st == PGRES_TUPLES_OK && std::strncmp(PQcmdStatus(res_.get()), "SELECT", 6) != 0)) {
      const char* n = PQcmdTuples(res_.get());  // "" for DDL
      c_.setChanges(*n ? std::atoll(n) : 0);
    }
    if (st == PGRES_TUPLES_OK) {
      rows_ = PQntuples(res_.get());
      row_ = 0;
      return;
    }
    if (st == PGRES_COMMAND_OK) {
      res_.reset();
      done_ = true;
      return;
    }
    Result failed = std::move(res_);
    done_ = true;
    c_.fail("store", failed.get());
  }

  PostgresConnection& c_;
  std::string sql_, pg_sql_;
  int nparams_ = 0;
  std::string name_;
  std::vector<Oid> types_;
  uint64_t generation_ = 0;
  // Parameters as PQexecPrepared takes them; ptr_ nullptr is SQL NULL. own_ holds copies and
  // binary encodings, bindRef/bindBlobRef point into the caller's memory.
  std::vector<std::string> own_;
  std::vector<const char*> ptr_;
  std::vector<int> len_;
  std::vector<int> binary_;
  Result res_;
  bool done_ = false;
  int row_ = 0, rows_ = 0;
  mutable std::vector<std::string> decoded_;
};

}  // namespace

std::string redactPostgresUrl(const std::string& url) {
  std::string out = url;
  const size_t scheme = out.find("://");
  if (scheme != std::string::npos) {
    const size_t host_start = scheme + 3;
    const size_t at = out.find('@', host_start);
    const size_t path = out.find_first_of("/?", host_start);
    if (at != std::string::npos && (path == std::string::npos || at < path)) {
      const size_t colon = out.find(':', host_start);
      if (colon != std::string::npos && colon < at) out.replace(colon + 1, at - colon - 1, "***");
    }
  }
  for (size_t p = out.find("password="); p != std::string::npos; p = out.find("password=", p + 1)) {
    const size_t start = p + 9;
    const size_t end = out.find('&', start);
    out.replace(start, (end == std::string::npos ? out.size() : end) - start, "***");
  }
  return out;
}

PostgresConnection::PostgresConnection(const std::string& url) : describe_(redactPostgresUrl(url)) {
  conn_ = PQconnectdb(url.c_str());
  if (!conn_ || PQstatus(conn_) != CONNECTION_OK) {
    const std::string msg = oneLine(conn_ ? PQerrorMessage(conn_) : "out of memory");
    PQfinish(conn_);
    conn_ = nullptr;
    throw StoreError("cannot open store " + describe_ + ": " + connectFailureKind(msg) + ": " +
                     msg);
  }
  setUpSession();
}

PostgresConnection::~PostgresConnection() { PQfinish(conn_); }

void PostgresConnection::setUpSession() {
  // Server notices ("relation … already exists, skipping") are not errors; keep stderr clean.
  PQsetNoticeProcessor(
      conn_, [](void*, const char*) {}, nullptr);
  // hex: what blob() decodes; extra_float_digits=3: floats print exactly on every version.
  Result r(PQexec(conn_,
                  "SET bytea_output = 'hex'; SET extra_float_digits = 3; "
                  "SET client_encoding = 'UTF8'"));
  if (!r || PQresultStatus(r.get()) != PGRES_COMMAND_OK) fail("store: session set-up", r.get());
}

void PostgresConnection::fail(const std::string& what, const PGresult* r) const {
  std::string msg;
  if (r && PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY)) {
    msg = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY);
    if (const char* detail = PQresultErrorField(r, PG_DIAG_MESSAGE_DETAIL)) {
      msg += std::string(" (") + detail + ")";
    }
    if (const char* state = PQresultErrorField(r, PG_DIAG_SQLSTATE)) {
      msg += std::string(" [SQLSTATE ") + state + "]";
    }
  } else {
    msg = oneLine(conn_ ? PQerrorMessage(conn_) : "no connection");
    if (msg.empty()) msg = "unknown error";
  }
  if (conn_ && PQstatus(conn_) == CONNECTION_BAD) {
    msg = "connection to " + describe_ + " lost: " + msg;
  }
  throw StoreError(what + ": " + msg);
}

void PostgresConnection::ensureConnected() {
  if (PQstatus(conn_) == CONNECTION_OK || in_tx_) return;
  PQreset(conn_);
  if (PQstatus(conn_) != CONNECTION_OK) {
    const std::string msg = oneLine(PQerrorMessage(conn_));
    throw StoreError("store " + describe_ + ": " + connectFailureKind(msg) + ": " + msg);
  }
  // A new session has none of the old prepared statements.
  prepared_.clear();
  ++generation_;
  setUpSession();
}

const PostgresConnection::Prepared& PostgresConnection::prepared(const std::string& pg_sql) {
  if (auto it = prepared_.find(pg_sql); it != prepared_.end()) return it->second;
  Prepared p;
  p.name = "perfhat_" + std::to_string(++next_name_);
  Result r(PQprepare(conn_, p.name.c_str(), pg_sql.c_str(), 0, nullptr));
  if (!r || PQresultStatus(r.get()) != PGRES_COMMAND_OK) {
    fail("store: prepare failed for \"" + pg_sql + "\"", r.get());
  }
  Result d(PQdescribePrepared(conn_, p.name.c_str()));
  if (!d || PQresultStatus(d.get()) != PGRES_COMMAND_OK) fail("store: describe failed", d.get());
  for (int i = 0; i < PQnparams(d.get()); ++i) p.param_types.push_back(PQparamtype(d.get(), i));
  return prepared_.emplace(pg_sql, std::move(p)).first->second;
}

void PostgresConnection::exec(const char* sql) {
  ensureConnected();
  Result r(PQexec(conn_, sql));
  const ExecStatusType st = r ? PQresultStatus(r.get()) : PGRES_FATAL_ERROR;
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) fail("store", r.get());
  const char* n = PQcmdTuples(r.get());
  changes_ = *n ? std::atoll(n) : 0;
}

std::unique_ptr<Statement> PostgresConnection::prepare(const char* sql) {
  return std::make_unique<PostgresStatement>(*this, sql);
}

void PostgresConnection::begin(bool write) {
  try {
    exec(write ? kBeginWrite : kBeginRead);
  } catch (const StoreError&) {
    rollback();  // BEGIN may have succeeded before the lock failed
    throw;
  }
  in_tx_ = true;
}

void PostgresConnection::commit() {
  Result r(PQexec(conn_, "COMMIT"));
  in_tx_ = false;
  if (!r || PQresultStatus(r.get()) != PGRES_COMMAND_OK) fail("store: commit failed", r.get());
  // COMMIT of a transaction that had an error answers "ROLLBACK" instead of failing.
  if (std::strcmp(PQcmdStatus(r.get()), "COMMIT") != 0) {
    throw StoreError("store: commit failed: the transaction was rolled back after an error");
  }
}

void PostgresConnection::rollback() noexcept {
  in_tx_ = false;
  if (PQstatus(conn_) != CONNECTION_OK) return;
  PQclear(PQexec(conn_, "ROLLBACK"));
}

}  // namespace perfhat::handler::sql
