// Cost of the backend-neutral SQL layer (feedback-handler/store/sql.h) on SQLite, the hot
// default: the same statements through sqlite.h directly and through sql.h, in one process, on an
// in-memory database so the per-call layer is as large a share as it can be. Compare CPU times.
//  * SelectRow: the store's primary-key lookup of one aggregate (8 binds, 5 columns read)
//  * UpdateRow: the store's in-place update of one aggregate (7 binds, one step)
#include <benchmark/benchmark.h>

#include <string>

#include "feedback-handler/store/sql.h"
#include "feedback-handler/store/sqlite.h"

namespace {

using namespace perfhat::handler;

constexpr int kRows = 1000;
constexpr const char* kSchema =
    "CREATE TABLE aggregates(key TEXT NOT NULL, bucket INTEGER NOT NULL, kind TEXT NOT NULL, "
    "sub TEXT NOT NULL, service TEXT NOT NULL, version TEXT NOT NULL, env TEXT NOT NULL, "
    "origin TEXT NOT NULL, sketch BLOB NOT NULL, x1 REAL NOT NULL, x2 REAL NOT NULL, "
    "x3 REAL NOT NULL, line INTEGER NOT NULL, seq INTEGER NOT NULL, "
    "PRIMARY KEY(key, bucket, kind, sub, service, version, env, origin))";
constexpr const char* kInsert =
    "INSERT INTO aggregates VALUES(?1,?2,'f','','svc','1.0','','',?3,1,2,3,4,5)";
constexpr const char* kSelect =
    "SELECT sketch, x1, x2, x3, line FROM aggregates WHERE key=?1 AND bucket=?2 AND kind=?3 AND "
    "sub=?4 AND service=?5 AND version=?6 AND env=?7 AND origin=?8";
constexpr const char* kUpdate =
    "UPDATE aggregates SET sketch=?1, x1=?2, x2=?3, x3=?4, line=?5, seq=?6 WHERE rowid=?7";

std::string keyOf(int i) { return "ns::Service::function" + std::to_string(i) + "(int, long)"; }
const std::string kSketch(600, 'x');

template <typename Db, typename Stmt>
void fill(Db& db) {
  db.exec(kSchema);
  Stmt ins(db, kInsert);
  for (int i = 0; i < kRows; ++i) {
    ins.reset();
    ins.bind(1, keyOf(i)).bind(2, int64_t{100}).bindBlob(3, kSketch);
    ins.step();
  }
}

template <typename Db, typename Stmt>
void selectRow(benchmark::State& state, Db& db) {
  fill<Db, Stmt>(db);
  Stmt q(db, kSelect);
  std::vector<std::string> keys;
  keys.reserve(kRows);
  for (int i = 0; i < kRows; ++i) keys.push_back(keyOf(i));
  int i = 0;
  double sum = 0;
  for (auto _ : state) {
    q.rewind();
    q.bindRef(1, keys[static_cast<size_t>(i++ % kRows)]).bind(2, int64_t{100}).bindRef(3, "f");
    q.bindRef(4, "").bindRef(5, "svc").bindRef(6, "1.0").bindRef(7, "").bindRef(8, "");
    if (!q.step()) state.SkipWithError("row not found");
    sum += static_cast<double>(q.blob(0).size()) + q.f64(1) + q.f64(2) + q.f64(3) +
           static_cast<double>(q.i64(4));
  }
  benchmark::DoNotOptimize(sum);
}

template <typename Db, typename Stmt>
void updateRow(benchmark::State& state, Db& db) {
  fill<Db, Stmt>(db);
  Stmt u(db, kUpdate);
  int64_t i = 0;
  for (auto _ : state) {
    u.rewind();
    u.bindBlobRef(1, kSketch).bind(2, 1.0).bind(3, 2.0).bind(4, 3.0).bind(5, int64_t{7});
    u.bind(6, i).bind(7, i % kRows + 1);
    u.step();
    ++i;
  }
}

void BM_SelectRow_SqliteH(benchmark::State& state) {
  Db db(":memory:", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  selectRow<Db, Stmt>(state, db);
}
void BM_SelectRow_SqlH(benchmark::State& state) {
  sql::Db db = sql::Db::open(":memory:");
  selectRow<sql::Db, sql::Stmt>(state, db);
}
void BM_UpdateRow_SqliteH(benchmark::State& state) {
  Db db(":memory:", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  updateRow<Db, Stmt>(state, db);
}
void BM_UpdateRow_SqlH(benchmark::State& state) {
  sql::Db db = sql::Db::open(":memory:");
  updateRow<sql::Db, sql::Stmt>(state, db);
}
BENCHMARK(BM_SelectRow_SqliteH);
BENCHMARK(BM_SelectRow_SqlH);
BENCHMARK(BM_UpdateRow_SqliteH);
BENCHMARK(BM_UpdateRow_SqlH);

}  // namespace
