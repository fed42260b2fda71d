#include "feedback-handler/store/schema.h"

#include <fmt/format.h>

#include <iterator>
#include <optional>
#include <string>

#include "feedback-handler/util/rfc3339.h"

namespace perfhat::handler::schema {
namespace {

// Append-only list: migration N is kMigrations[N-1]. Never edit a shipped entry; add one.
// Written with SQLite type names; sql::ddl maps them for PostgreSQL (INTEGER → BIGINT, REAL →
// DOUBLE PRECISION, BLOB → BYTEA, no WITHOUT ROWID), so one list serves both backends.
const char* const kMigrations[] = {
    R"SQL(
CREATE TABLE meta(name TEXT PRIMARY KEY, value INTEGER NOT NULL);
INSERT INTO meta(name, value) VALUES('seq', 0);
CREATE TABLE functions(
  key TEXT PRIMARY KEY, mangled TEXT NOT NULL DEFAULT '', file TEXT NOT NULL DEFAULT '',
  line INTEGER NOT NULL DEFAULT 0, last_seen_ns INTEGER NOT NULL DEFAULT 0,
  seq INTEGER NOT NULL);
CREATE INDEX functions_mangled ON functions(mangled);
CREATE INDEX functions_seq ON functions(seq);
CREATE TABLE hosts(
  key TEXT NOT NULL, host TEXT NOT NULL, last_seen_ns INTEGER NOT NULL, seq INTEGER NOT NULL,
  PRIMARY KEY(key, host));
CREATE INDEX hosts_seq ON hosts(seq);
CREATE TABLE aggregates(
  key TEXT NOT NULL, bucket INTEGER NOT NULL, kind TEXT NOT NULL, sub TEXT NOT NULL,
  service TEXT NOT NULL, version TEXT NOT NULL, env TEXT NOT NULL, origin TEXT NOT NULL,
  sketch BLOB NOT NULL, x1 REAL NOT NULL, x2 REAL NOT NULL, x3 REAL NOT NULL,
  line INTEGER NOT NULL, seq INTEGER NOT NULL,
  PRIMARY KEY(key, bucket, kind, sub, service, version, env, origin));
CREATE INDEX aggregates_seq ON aggregates(seq);
CREATE INDEX aggregates_bucket ON aggregates(bucket);
)SQL",
    // 2. Aggregates clustered by their primary key (WITHOUT ROWID). A batchGet reads every row
    //    of a key in its window; in a rowid table each of those rows is a second B-tree search
    //    (the rows of one key were written minutes apart, so they sit on different pages). Here
    //    the rows of one key are adjacent in the primary-key B-tree itself. (PostgreSQL copies
    //    the table once; its tables are heaps with a separate primary-key index either way.)
    R"SQL(
CREATE TABLE aggregates_clustered(
  key TEXT NOT NULL, bucket INTEGER NOT NULL, kind TEXT NOT NULL, sub TEXT NOT NULL,
  service TEXT NOT NULL, version TEXT NOT NULL, env TEXT NOT NULL, origin TEXT NOT NULL,
  sketch BLOB NOT NULL, x1 REAL NOT NULL, x2 REAL NOT NULL, x3 REAL NOT NULL,
  line INTEGER NOT NULL, seq INTEGER NOT NULL,
  PRIMARY KEY(key, bucket, kind, sub, service, version, env, origin)) WITHOUT ROWID;
INSERT INTO aggregates_clustered
  SELECT key, bucket, kind, sub, service, version, env, origin, sketch, x1, x2, x3, line, seq
  FROM aggregates ORDER BY key, bucket, kind, sub, service, version, env, origin;
DROP TABLE aggregates;
ALTER TABLE aggregates_clustered RENAME TO aggregates;
CREATE INDEX aggregates_seq ON aggregates(seq);
CREATE INDEX aggregates_bucket ON aggregates(bucket);
)SQL",
    // 3. The latest collection-budget status of each (service, instance) of libperfhat
    //    (POST /v1/budget, feedback-handler/budget/budget_status.h): the JSON as checked.
    R"SQL(
CREATE TABLE budget_status(
  service TEXT NOT NULL, instance TEXT NOT NULL, version TEXT NOT NULL,
  received_ns INTEGER NOT NULL, status TEXT NOT NULL,
  PRIMARY KEY(service, instance));
CREATE INDEX budget_status_received ON budget_status(received_ns);
)SQL",
};
constexpr int kSchemaVersion = static_cast<int>(std::size(kMigrations));

}  // namespace

const char* const kFunctionMerge =
    "mangled=CASE WHEN excluded.mangled<>'' THEN excluded.mangled ELSE functions.mangled END, "
    "file=CASE WHEN excluded.file<>'' THEN excluded.file ELSE functions.file END, "
    "line=CASE WHEN excluded.line<>0 THEN excluded.line ELSE functions.line END, "
    "last_seen_ns=CASE WHEN excluded.last_seen_ns>functions.last_seen_ns "
    "THEN excluded.last_seen_ns ELSE functions.last_seen_ns END, seq=excluded.seq";

// Every connection to a SQLite store: reads of large batchGets touch many pages, so a 64 MiB
// page cache and memory-mapped I/O avoid a pread per page.
void configureSqlite(sql::Db& db) {
  db.exec("PRAGMA cache_size=-65536");
  db.exec("PRAGMA mmap_size=268435456");
}

void open(sql::Db& db, bool synchronous_full, int64_t now_ns) {
  const bool sqlite = db.backend() == sql::Backend::kSqlite;
  // Checked and migrated under the write lock: replicas starting together migrate once.
  std::optional<sql::Transaction> migrate;
  int current = 0;
  try {
    if (sqlite) {
      db.exec("PRAGMA journal_mode=WAL");
      db.exec(synchronous_full ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL");
      configureSqlite(db);
    }
    migrate.emplace(db);
    db.exec(sql::ddl("CREATE TABLE IF NOT EXISTS schema_migrations(version INTEGER PRIMARY KEY, "
                     "applied_at TEXT NOT NULL)",
                     db.backend())
                .c_str());
    sql::Stmt s(db, "SELECT COALESCE(MAX(version), 0) FROM schema_migrations");
    if (s.step()) current = static_cast<int>(s.i64(0));
  } catch (const StoreError& e) {
    throw StoreError("cannot use store " + db.describe() + ": " + e.what());
  }
  if (current > kSchemaVersion) {
    throw StoreError(fmt::format("store {} has schema version {}, newer than this binary's {}",
                                 db.describe(), current, kSchemaVersion));
  }
  for (int v = current + 1; v <= kSchemaVersion; ++v) {
    db.exec(sql::ddl(kMigrations[v - 1], db.backend()).c_str());
    sql::Stmt ins(db, "INSERT INTO schema_migrations(version, applied_at) VALUES(?, ?)");
    ins.bind(1, int64_t{v}).bind(2, formatRfc3339(now_ns));
    ins.step();
  }
  migrate->commit();
}

}  // namespace perfhat::handler::schema
