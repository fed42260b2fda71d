// The store's connection, prepared statements and row cache, shared by its parts: store.cc
// (the public calls), row_writers.cc (how a batch becomes rows on each backend) and
// batch_get_reader.cc (the read path).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "feedback-handler/store/key_name_index.h"
#include "feedback-handler/store/row_cache.h"
#include "feedback-handler/store/schema.h"
#include "feedback-handler/store/sql.h"
#include "feedback-handler/store/store.h"

namespace perfhat::handler {

struct Store::Impl {
  using HotRow = store_detail::HotRow;
  using MergedRows = store_detail::MergedRows;

  sql::Db db;
  bool sqlite = true;
  std::string replica;  // origin of rows ingested here, on PostgreSQL (see replicaOrigin)
  AggKey scratch;
  // `k` with this replica's origin when it was ingested here (origin "") on PostgreSQL.
  const AggKey& own(const AggKey& k) {
    if (replica.empty() || !k.origin.empty()) return k;
    scratch = k;
    scratch.origin = replica;
    return scratch;
  }
  std::unique_ptr<sql::Stmt> upsert_replace, upsert_fn, upsert_host, get_seq, set_seq;
  std::unique_ptr<sql::Stmt> fn_by_key, fn_by_mangled;
  KeyNameIndex names;  // for requests that name no stored key (key_name_index.h)
  std::unique_ptr<sql::Stmt> select_row, insert_row, update_row;
  // Extra read connections to the SQLite file `path` for the chunks of a large batchGet (opened
  // on first use), and how many threads may read one request (1 for PostgreSQL and in-memory
  // stores: they read on `db` alone).
  size_t read_threads = 1;
  std::vector<std::unique_ptr<sql::Db>> readers;
  static constexpr size_t kKeysPerChunk = 1024;  // smaller chunks do not repay a thread
  sql::Db& reader(size_t i, const std::string& path) {
    if (readers.size() <= i) readers.resize(i + 1);
    if (!readers[i]) {
      auto db = std::make_unique<sql::Db>(sql::Db::open(path));
      schema::configureSqlite(*db);
      readers[i] = std::move(db);
    }
    return *readers[i];
  }
  store_detail::RowCache cache;

  // The current sequence (0 in a fresh store).
  int64_t currentSeq();

  // --- row_writers.cc ---
  void prepareStatements();
  // The aggregates of `batch` with sequence `seq`; rows merged for ingest go to `merged` (cached
  // once the transaction commits).
  void writeAggregatesSqlite(const Batch& batch, WriteMode mode, int64_t seq, MergedRows& merged);
  void writeAggregatesPostgres(const Batch& batch, WriteMode mode, int64_t seq, MergedRows& merged);
  void writeFunctions(const Batch& batch, int64_t seq);
  store_detail::HostsWritten writeHosts(const Batch& batch, int64_t seq);
  void writeMeta(const Batch& batch, int64_t seq);

  // The row of `k` (exists = false when there is none). A corrupt stored sketch reads as empty
  // (the merge then overwrites it with the new data: its own data is already lost, and refusing
  // would block every future write of the row).
  HotRow stored(const AggKey& k);
  // PostgreSQL: one statement per row costs a round trip to the server (~0.3 ms of CPU on a VM,
  // mostly waking the server process), so writes go in multi-row statements of up to kPgChunk
  // rows, prepared once per (statement, row count): counts are kPgChunk or powers of two below.
  enum class Multi { kSelectRows, kUpsertRows, kUpsertFunctions };
  static constexpr size_t kPgChunk = 128;
  std::map<std::pair<Multi, size_t>, std::unique_ptr<sql::Stmt>> multi_stmts;
  static size_t chunkOf(size_t left);
  sql::Stmt& multi(Multi what, size_t rows);
  // A row's value from its sketch, x1, x2, x3, line columns starting at `c`. A corrupt sketch
  // reads as empty (see stored()).
  static AggValue storedValue(sql::Stmt& q, int c);
  // Binds the 8 key columns of `k` from parameter `p` on; returns the next parameter.
  static int bindKey(sql::Stmt& q, int p, const AggKey& k, const char& kind);
  // Stored values of `keys` (absent rows stay empty), in multi-row selects.
  std::vector<HotRow> storedMany(const std::vector<const AggKey*>& keys);
  // Writes `rows` (key, value) with sequence `seq`, in multi-row upserts.
  void upsertMany(const MergedRows& rows, int64_t seq);
};

}  // namespace perfhat::handler
