#include "server/index/summary_store.h"

#include <filesystem>

#include <nlohmann/json.hpp>

#include "server/index/summary_codec.h"

namespace perfhat::index {
namespace {

using nlohmann::json;

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS files(
  path TEXT PRIMARY KEY,
  content TEXT NOT NULL,
  flags TEXT NOT NULL,
  headers TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS functions(
  file TEXT NOT NULL,
  key TEXT NOT NULL,
  summary TEXT NOT NULL,
  PRIMARY KEY(file, key));
)sql";

// One prepared statement, finalized on scope exit.
class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) { sqlite3_prepare_v2(db, sql, -1, &s_, nullptr); }
  ~Stmt() { sqlite3_finalize(s_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  explicit operator bool() const { return s_ != nullptr; }
  Stmt& bind(int i, const std::string& v) {
    sqlite3_bind_text(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  bool row() { return sqlite3_step(s_) == SQLITE_ROW; }
  bool done() { return sqlite3_step(s_) == SQLITE_DONE; }
  std::string text(int col) const {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(s_, col));
    return p ? std::string(p, static_cast<size_t>(sqlite3_column_bytes(s_, col))) : std::string();
  }
  int integer(int col) const { return sqlite3_column_int(s_, col); }

 private:
  sqlite3_stmt* s_ = nullptr;
};

void removeDatabase(const std::string& path) {
  std::error_code ec;
  for (const char* suffix : {"", "-wal", "-shm", "-journal"})
    std::filesystem::remove(path + suffix, ec);
}

// "" when `db` holds a usable index of this version, else why not.
std::string checkDatabase(sqlite3* db) {
  {
    Stmt s(db, "PRAGMA quick_check");
    if (!s || !s.row() || s.text(0) != "ok") return "corrupt (quick_check failed)";
  }
  Stmt v(db, "PRAGMA user_version");
  if (!v || !v.row()) return "unreadable";
  int version = v.integer(0);
  if (version != 0 && version != SummaryStore::kSchemaVersion)
    return "schema version " + std::to_string(version) + ", this build writes " +
           std::to_string(SummaryStore::kSchemaVersion);
  return "";
}

}  // namespace

Result<std::unique_ptr<SummaryStore>> SummaryStore::open(const std::string& path) {
  using Opened = Result<std::unique_ptr<SummaryStore>>;
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  std::unique_ptr<SummaryStore> store(new SummaryStore());
  store->path_ = path;
  MutexLock lock(store->mu_);
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (store->db_) sqlite3_close(store->db_);
    store->db_ = nullptr;
    if (sqlite3_open(path.c_str(), &store->db_) != SQLITE_OK) {
      if (attempt == 0) {
        store->rebuilt_ = "could not be opened";
        removeDatabase(path);
        continue;
      }
      break;
    }
    sqlite3_busy_timeout(store->db_, 2000);
    std::string why = checkDatabase(store->db_);
    if (why.empty() && store->exec(kSchema) &&
        store->exec(("PRAGMA user_version = " + std::to_string(kSchemaVersion)).c_str()) &&
        store->exec("PRAGMA journal_mode = WAL") && store->exec("PRAGMA synchronous = NORMAL"))
      return Opened::success(std::move(store));
    if (why.empty()) why = sqlite3_errmsg(store->db_);
    store->rebuilt_ = why;
    sqlite3_close(store->db_);
    store->db_ = nullptr;
    removeDatabase(path);
  }
  if (store->db_) sqlite3_close(store->db_);
  store->db_ = nullptr;
  return Opened::failure("cannot open the index " + path + ": " + store->rebuilt_);
}

SummaryStore::~SummaryStore() {
  MutexLock lock(mu_);
  if (db_) sqlite3_close(db_);
}

bool SummaryStore::exec(const char* sql) const {
  return sqlite3_exec(db_, sql, nullptr, nullptr, nullptr) == SQLITE_OK;
}

std::optional<FileStamp> SummaryStore::stamp(const std::string& file) const {
  MutexLock lock(mu_);
  Stmt s(db_, "SELECT content, flags, headers FROM files WHERE path = ?");
  if (!s) return std::nullopt;
  s.bind(1, file);
  if (!s.row()) return std::nullopt;
  try {
    FileStamp st;
    st.content = std::stoull(s.text(0));
    st.flags = std::stoull(s.text(1));
    json headers = json::parse(s.text(2));
    for (const auto& h : headers)
      st.headers.emplace_back(h.at(0).get<std::string>(), std::stoull(h.at(1).get<std::string>()));
    return st;
  } catch (const std::exception&) {
    return std::nullopt;  // a damaged row: the file is indexed again
  }
}

std::vector<analysis::FunctionInfo> SummaryStore::functions(const std::string& file) const {
  MutexLock lock(mu_);
  std::vector<analysis::FunctionInfo> out;
  Stmt s(db_, "SELECT summary FROM functions WHERE file = ?");
  if (!s) return out;
  s.bind(1, file);
  while (s.row())
    if (auto fn = decodeSummary(s.text(0))) out.push_back(std::move(*fn));
  return out;
}

void SummaryStore::put(const std::string& file, const FileStamp& stamp,
                       const std::vector<analysis::FunctionInfo>& functions) {
  MutexLock lock(mu_);
  json headers = json::array();
  for (const auto& [h, hash] : stamp.headers) headers.push_back({h, std::to_string(hash)});
  exec("BEGIN");
  {
    Stmt del(db_, "DELETE FROM functions WHERE file = ?");
    del.bind(1, file).done();
    Stmt f(db_, "INSERT OR REPLACE INTO files(path, content, flags, headers) VALUES(?,?,?,?)");
    f.bind(1, file)
        .bind(2, std::to_string(stamp.content))
        .bind(3, std::to_string(stamp.flags))
        .bind(4, headers.dump(-1, ' ', false, json::error_handler_t::replace))
        .done();
    size_t kept = 0;
    for (const auto& fn : functions) {
      if (kept == kMaxFunctionsPerFile) break;
      std::string text = encodeSummary(fn);
      if (text.size() > kMaxSummaryBytes) continue;
      Stmt ins(db_, "INSERT OR REPLACE INTO functions(file, key, summary) VALUES(?,?,?)");
      ins.bind(1, file).bind(2, fn.key).bind(3, text).done();
      ++kept;
    }
  }
  if (!exec("COMMIT")) exec("ROLLBACK");
}

void SummaryStore::erase(const std::string& file) {
  MutexLock lock(mu_);
  Stmt a(db_, "DELETE FROM functions WHERE file = ?");
  a.bind(1, file).done();
  Stmt b(db_, "DELETE FROM files WHERE path = ?");
  b.bind(1, file).done();
}

std::vector<std::string> SummaryStore::files() const {
  MutexLock lock(mu_);
  std::vector<std::string> out;
  Stmt s(db_, "SELECT path FROM files ORDER BY path");
  while (s && s.row()) out.push_back(s.text(0));
  return out;
}

}  // namespace perfhat::index
