// Persistent feedback store (DESIGN §4–§5): SQLite in WAL mode, or one PostgreSQL shared by
// several deployed replicas (store/sql.h picks the backend from StoreOptions::path).
//
// Durability: write() commits the whole batch in one transaction with synchronous=FULL, and the
// HTTP layer replies 2xx only after write() returns, so an acknowledged batch survives kill -9
// (and power loss, as far as fsync goes). NORMAL would be faster but can lose the last
// transactions on power loss in WAL mode, which breaks the acknowledged-means-durable contract.
//
// Hot rows: kMerge writes merge in C++ against a cache of the rows this process last wrote (the
// store is the only writer of its file), so steady-state ingest does not deserialize stored
// sketches. The cache changes only after a successful COMMIT, and purge/replace invalidate it.
// On PostgreSQL the rows ingested by a replica carry an origin of its own, so each replica is
// still the only writer of the rows it caches; reads merge all origins.
//
// Change tracking: every write gets the next value of a monotonic sequence; rows touched carry it,
// so `/v1/changes?since=` and the inter-handler export are range scans on the sequence.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/feedback.h"
#include "common/thread_annotations.h"
#include "feedback-handler/store/batch.h"
#include "feedback-handler/store/sql.h"
#include "feedback-handler/store/store_error.h"

namespace perfhat::handler {

class BatchGetReader;
class ChunkTeam;
class ReleaseCatalog;  // variants/release_catalog.h

struct StoreOptions {
  std::string path;                          // SQLite file, or postgresql://USER@HOST[:PORT]/DB
  int64_t retention_minutes = 30 * 24 * 60;  // aggregates older than this are purged
  int64_t default_range_minutes = 24 * 60;   // read window when the request gives none
  bool synchronous_full = true;              // see the durability note above
  // Decoded copies of recently written ingest rows (see "Hot rows" above). A merge into a
  // cached row skips reading and decoding the stored sketch. ~2–3 kB per row; 0 disables.
  size_t hot_rows = 16384;
  // Threads reading one large batchGet (≥ 2048 keys) in parallel, each chunk on its own read
  // connection of the same snapshot (the HTTP server writes the answer with as many). 0: one per
  // core, at most 4; 1: the calling thread only. SQLite files only (PostgreSQL reads on the
  // store's one connection).
  int read_threads = 0;
  // Clock (ns since the epoch); injectable for tests.
  std::function<int64_t()> now_ns;
  // Release manifests (perfhat-handler --releases DIR): reads then weigh counts by exposure
  // (variants/exposure.h). nullptr: no release is known, counts are as observed.
  std::shared_ptr<ReleaseCatalog> releases;
};

enum class WriteMode {
  kMerge,    // add to existing aggregates (ingest)
  kReplace,  // overwrite rows with the same key incl. origin (sync from an upstream)
};

struct ChangesPage {
  uint64_t cursor = 0;            // pass as `since` next time
  std::vector<std::string> keys;  // keys with new data since the given cursor
};

struct ExportPage {
  Batch rows;  // aggregates with their origin, function infos and hosts
  uint64_t cursor = 0;
  bool more = false;  // another page follows
  // Rows of a parsed export left out for breaking the intake limits (sync/export_json.h).
  uint64_t rejected = 0;
};

class Store {
 public:
  // Opens or creates the store and applies migrations. Throws StoreError with a clear message
  // when the file is not a SQLite database, is unwritable or has a newer schema.
  explicit Store(StoreOptions options);
  ~Store();

  // Persists a batch in one durable transaction; returns the new cursor. Throws StoreError.
  uint64_t write(const Batch& batch, WriteMode mode = WriteMode::kMerge);

  // A large request (≥ 2048 keys) is read in chunks on the threads of `team` when given (a
  // server passes the team that also writes the answer), else on a team of its own.
  BatchGetResponse batchGet(const BatchGetRequest& request, ChunkTeam* team = nullptr);
  ChangesPage changes(uint64_t since, size_t limit = 10000);

  // The rows dynamic metrics are derived from (dynamic/call_graph.h): function, call-site and
  // self-time rows of `service` and `version` (each: every one when empty) in `range` (the
  // default window when absent), read in one snapshot and handed to `row` as stored (every
  // environment and origin), then `known` once per function key with rows of that service and
  // version anywhere in the retention (every stored function when both are empty). Returns the
  // window read. Throws std::invalid_argument for a malformed range, StoreError.
  struct CallRow {
    AggKind kind;
    std::string_view key, sub;
    int64_t bucket;
    const DDSketch& sketch;
  };
  TimeWindow scanCallRows(const std::string& service, const std::string& version,
                          const std::optional<TimeWindow>& range,
                          const std::function<void(const CallRow&)>& row,
                          const std::function<void(std::string_view)>& known);
  // libperfhat's collection-budget status (POST/GET /v1/budget; store/budget_store.cc): the
  // latest per (service, instance), the oldest beyond the bounds of budget_status.h dropped.
  struct BudgetRow {
    std::string service, version, instance, status;
    int64_t received_ns = 0;
  };
  void putBudgetStatus(const BudgetRow& row);
  // The newest status of `service` (of any service when empty); nullopt when there is none.
  std::optional<BudgetRow> budgetStatus(const std::string& service);
  // Rows changed since `since`; at most about max_rows (a sequence is never split).
  ExportPage exportSince(uint64_t since, size_t max_rows = 20000);
  uint64_t cursor();
  // Bookkeeping value written through Batch::meta; `fallback` when absent.
  int64_t meta(const std::string& name, int64_t fallback = 0);
  // Deletes data older than the retention; returns rows removed.
  int64_t purge();
  uint64_t aggregateCount();
  // Cheap liveness probe of the database (for /healthz).
  void ping();

  int64_t now() const { return options_.now_ns(); }
  // Aggregate rows write() dropped because they were dated beyond now + the clock-skew allowance
  // (intake_limits.h): outside every read window, purge would never remove them.
  uint64_t futureRowsDropped() const { return future_rows_.load(); }
  sql::Backend backend() const;
  const StoreOptions& options() const { return options_; }

 private:
  friend class BatchGetReader;  // the read path (store/batch_get_reader.h)
  struct Impl;
  StoreOptions options_;
  Mutex mu_;  // SQLite connection is used by one thread at a time
  std::atomic<uint64_t> future_rows_{0};
  sql::Backend backend_ = sql::Backend::kSqlite;  // set once, by the constructor
  std::unique_ptr<Impl> impl_ PT_GUARDED_BY(mu_);
};

}  // namespace perfhat::handler
