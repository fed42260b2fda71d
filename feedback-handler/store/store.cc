#include "feedback-handler/store/store.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <random>
#include <set>

#include <fmt/format.h>
#include <unistd.h>

#include "feedback-handler/store/batch_get_reader.h"
#include "feedback-handler/store/row_accumulator.h"
#include "feedback-handler/store/schema.h"
#include "feedback-handler/store/store_impl.h"
#include "feedback-handler/util/parallel.h"
#include "feedback-handler/util/rfc3339.h"

namespace perfhat::handler {
namespace {

using store_detail::floorDiv;
using store_detail::storedCount;
using store_detail::storedSum;

int64_t defaultNow() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// On PostgreSQL several handler replicas share the tables. Rows ingested here carry an origin
// unique to this store instance (host, pid and a random number: two stores in one process, or
// containers with equal host names and pids, still differ), so each replica is the only writer
// of its rows: its hot-row cache stays exact, replicas never contend for a row, and reads merge
// the rows of all replicas.
std::string replicaOrigin() {
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  static std::atomic<uint32_t> next{std::random_device{}()};
  char nonce[16];
  std::snprintf(nonce, sizeof nonce, "%08x", next.fetch_add(1));
  return "replica " + std::string(host) + " pid " + std::to_string(getpid()) + " " + nonce;
}

// Rows dated beyond now + the clock-skew allowance would lie outside every read window and never
// be purged. The intake refuses them with a reason (ingest/intake_limits.h); this is the store's
// own guard for every other writer (sync from an upstream, a future caller): such rows are dropped
// and function and host times are cut to the allowance. Returns `batch` itself when nothing is
// out of range (the usual case), else the screened copy in `kept`.
const Batch& withoutFuture(const Batch& batch, int64_t now_ns, Batch& kept, uint64_t& dropped) {
  const int64_t newest_ns = now_ns > INT64_MAX - kClockSkewNs ? INT64_MAX : now_ns + kClockSkewNs;
  const int64_t newest_bucket = floorDiv(newest_ns, kBucketNs);
  bool clean = true;
  for (const auto& [k, v] : batch.aggregates) clean = clean && k.bucket <= newest_bucket;
  for (const auto& [k, f] : batch.functions) clean = clean && f.last_seen_ns <= newest_ns;
  for (const auto& [k, t] : batch.hosts) clean = clean && t <= newest_ns;
  if (clean) return batch;
  kept = Batch();
  for (const auto& [k, v] : batch.aggregates) {
    if (k.bucket <= newest_bucket) {
      kept.aggregates.emplace(k, v);
    } else {
      ++dropped;
    }
  }
  kept.functions = batch.functions;
  for (auto& [k, f] : kept.functions) f.last_seen_ns = std::min(f.last_seen_ns, newest_ns);
  kept.hosts = batch.hosts;
  for (auto& [k, t] : kept.hosts) t = std::min(t, newest_ns);
  kept.meta = batch.meta;
  return kept;
}

}  // namespace

Store::Store(StoreOptions options) : options_(std::move(options)), impl_(std::make_unique<Impl>()) {
  if (!options_.now_ns) options_.now_ns = defaultNow;
  sql::Db& db = impl_->db;
  db = sql::Db::open(options_.path);  // a SQLite file or a postgresql:// URL
  backend_ = db.backend();
  impl_->sqlite = backend_ == sql::Backend::kSqlite;
  if (sql::isSqliteFile(options_.path)) impl_->read_threads = requestThreads(options_.read_threads);
  if (!impl_->sqlite) impl_->replica = replicaOrigin();
  schema::open(db, options_.synchronous_full, options_.now_ns());
  impl_->prepareStatements();
}

Store::~Store() = default;

uint64_t Store::write(const Batch& incoming, WriteMode mode) {
  MutexLock lock(mu_);
  Impl& im = *impl_;
  Batch screened;
  uint64_t dropped = 0;
  const Batch& batch = withoutFuture(incoming, options_.now_ns(), screened, dropped);
  if (dropped > 0) {
    future_rows_ += dropped;
    fmt::print(stderr,
               "perfhat-handler: store: dropped {} aggregate row(s) dated beyond now + {} minutes "
               "(they would never be read or purged)\n",
               dropped, kClockSkewNs / kBucketNs);
  }
  sql::Transaction tx(im.db);
  const int64_t seq = im.currentSeq() + 1;
  Impl::MergedRows merged;  // merged values, cached only once the transaction commits
  if (im.sqlite) {
    im.writeAggregatesSqlite(batch, mode, seq, merged);
  } else {
    im.writeAggregatesPostgres(batch, mode, seq, merged);
  }
  im.writeFunctions(batch, seq);
  const store_detail::HostsWritten hosts_written = im.writeHosts(batch, seq);
  im.writeMeta(batch, seq);
  tx.commit();
  im.cache.remember(merged, options_.hot_rows);
  im.cache.rememberHosts(hosts_written, options_.hot_rows);
  return static_cast<uint64_t>(seq);
}

sql::Backend Store::backend() const { return backend_; }

uint64_t Store::cursor() {
  MutexLock lock(mu_);
  return static_cast<uint64_t>(impl_->currentSeq());
}

BatchGetResponse Store::batchGet(const BatchGetRequest& request, ChunkTeam* team) {
  BatchGetReader reader(options_, request, team);  // throws on a malformed window
  MutexLock lock(mu_);
  return reader.read(*impl_);
}

ChangesPage Store::changes(uint64_t since, size_t limit) {
  MutexLock lock(mu_);
  Impl& im = *impl_;
  ChangesPage page;
  sql::Stmt gs(im.db, "SELECT value FROM meta WHERE name='seq'");
  page.cursor = gs.step() ? static_cast<uint64_t>(gs.i64(0)) : 0;
  sql::Stmt q(im.db, "SELECT key, seq FROM functions WHERE seq>? ORDER BY seq LIMIT ?");
  q.bind(1, static_cast<int64_t>(since)).bind(2, static_cast<int64_t>(limit));
  int64_t last = 0;
  while (q.step()) {
    page.keys.push_back(q.text(0));
    last = q.i64(1);
  }
  if (page.keys.size() >= limit) {
    // Truncated: finish the last sequence so the cursor never splits a write.
    sql::Stmt rest(im.db, "SELECT key FROM functions WHERE seq=? ORDER BY key");
    rest.bind(1, last);
    std::set<std::string> have(page.keys.begin(), page.keys.end());
    while (rest.step()) {
      if (!have.count(rest.text(0))) page.keys.push_back(rest.text(0));
    }
    page.cursor = static_cast<uint64_t>(last);
  }
  return page;
}

TimeWindow Store::scanCallRows(const std::string& service, const std::string& version,
                               const std::optional<TimeWindow>& range,
                               const std::function<void(const CallRow&)>& row,
                               const std::function<void(std::string_view)>& known) {
  const store_detail::Window w =
      store_detail::resolveWindow(range, options_.now_ns(), options_.default_range_minutes);
  MutexLock lock(mu_);
  Impl& im = *impl_;
  sql::Transaction snapshot(im.db, /*write=*/false);
  // " AND service = ?N AND version = ?M" for the dimensions given, numbered from `first`.
  auto dims = [&](int first) {
    std::string c;
    if (!service.empty()) c += " AND service = ?" + std::to_string(first++);
    if (!version.empty()) c += " AND version = ?" + std::to_string(first);
    return c;
  };
  auto bindDims = [&](sql::Stmt& st, int first) {
    if (!service.empty()) st.bind(first++, std::string_view(service));
    if (!version.empty()) st.bind(first, std::string_view(version));
  };
  sql::Stmt q(im.db, ("SELECT kind, key, sub, bucket, sketch FROM aggregates WHERE bucket >= ?1 "
                      "AND bucket <= ?2 AND kind IN ('f', 'c', 't')" +
                      dims(3))
                         .c_str());
  q.bind(1, w.first_bucket()).bind(2, w.last_bucket());
  bindDims(q, 3);
  DDSketch sketch;
  while (q.step()) {
    const std::string_view kind = q.blob(0);
    try {
      sketch.assignSerialized(q.blob(4));
    } catch (const DDSketchError&) {
      continue;  // a corrupt row reads as empty, as in batchGet
    }
    const std::string key = q.text(1), sub = q.text(2);
    row(CallRow{static_cast<AggKind>(kind.empty() ? 'f' : kind[0]), key, sub, q.i64(3), sketch});
  }
  const bool any = service.empty() && version.empty();
  sql::Stmt k(im.db,
              any ? "SELECT key FROM functions"
                  : ("SELECT DISTINCT key FROM aggregates WHERE kind = 'f'" + dims(1)).c_str());
  if (!any) bindDims(k, 1);
  while (k.step()) known(k.text(0));
  snapshot.commit();
  return TimeWindow{formatRfc3339(w.from_ns), formatRfc3339(w.to_ns)};
}

ExportPage Store::exportSince(uint64_t since, size_t max_rows) {
  MutexLock lock(mu_);
  Impl& im = *impl_;
  ExportPage page;
  sql::Stmt gs(im.db, "SELECT value FROM meta WHERE name='seq'");
  int64_t upto = gs.step() ? gs.i64(0) : 0;
  sql::Stmt cut(im.db, "SELECT seq FROM aggregates WHERE seq>? ORDER BY seq LIMIT 1 OFFSET ?");
  cut.bind(1, static_cast<int64_t>(since))
      .bind(2, static_cast<int64_t>(std::max<size_t>(max_rows, 1) - 1));
  if (cut.step() && cut.i64(0) < upto) {
    upto = cut.i64(0);
    page.more = true;
  }
  page.cursor = static_cast<uint64_t>(upto);
  sql::Stmt q(
      im.db,
      "SELECT kind, key, sub, bucket, service, version, env, origin, sketch, x1, x2, x3, line "
      "FROM aggregates WHERE seq>? AND seq<=?");
  q.bind(1, static_cast<int64_t>(since)).bind(2, upto);
  while (q.step()) {
    AggKey k;
    std::string kind = q.text(0);
    k.kind = static_cast<AggKind>(kind.empty() ? 'f' : kind[0]);
    k.key = q.text(1);
    k.sub = q.text(2);
    k.bucket = q.i64(3);
    k.service = q.text(4);
    k.version = q.text(5);
    k.env = q.text(6);
    k.origin = q.text(7);
    AggValue v;
    try {
      v.sketch = DDSketch::deserialize(q.blob(8));
    } catch (const DDSketchError&) {
      continue;
    }
    v.x1 = storedCount(q.f64(9));
    v.x2 = storedSum(q.f64(10));
    v.x3 = storedCount(q.f64(11));
    v.line = static_cast<int>(q.i64(12));
    page.rows.aggregates.emplace(std::move(k), std::move(v));
  }
  sql::Stmt f(
      im.db, "SELECT key, mangled, file, line, last_seen_ns FROM functions WHERE seq>? AND seq<=?");
  f.bind(1, static_cast<int64_t>(since)).bind(2, upto);
  while (f.step()) {
    page.rows.functions[f.text(0)] =
        FunctionInfo{f.text(1), f.text(2), static_cast<int>(f.i64(3)), f.i64(4)};
  }
  sql::Stmt h(im.db, "SELECT key, host, last_seen_ns FROM hosts WHERE seq>? AND seq<=?");
  h.bind(1, static_cast<int64_t>(since)).bind(2, upto);
  while (h.step()) page.rows.hosts[{h.text(0), h.text(1)}] = h.i64(2);
  return page;
}

int64_t Store::purge() {
  const int64_t cutoff_bucket = floorDiv(options_.now_ns(), kBucketNs) - options_.retention_minutes;
  MutexLock lock(mu_);
  Impl& im = *impl_;
  sql::Transaction tx(im.db);
  sql::Stmt d(im.db, "DELETE FROM aggregates WHERE bucket<?");
  d.bind(1, cutoff_bucket);
  d.step();
  int64_t removed = im.db.changes();
  sql::Stmt df(im.db, "DELETE FROM functions WHERE last_seen_ns<?");
  df.bind(1, cutoff_bucket * kBucketNs);
  df.step();
  sql::Stmt dh(im.db, "DELETE FROM hosts WHERE last_seen_ns<?");
  dh.bind(1, cutoff_bucket * kBucketNs);
  dh.step();
  tx.commit();
  im.cache.clear();  // purged rows must not come back through a merge
  return removed;
}

int64_t Store::meta(const std::string& name, int64_t fallback) {
  MutexLock lock(mu_);
  sql::Stmt q(impl_->db, "SELECT value FROM meta WHERE name=?");
  q.bind(1, name);
  return q.step() ? q.i64(0) : fallback;
}

uint64_t Store::aggregateCount() {
  MutexLock lock(mu_);
  sql::Stmt q(impl_->db, "SELECT COUNT(*) FROM aggregates");
  return q.step() ? static_cast<uint64_t>(q.i64(0)) : 0;
}

void Store::ping() {
  MutexLock lock(mu_);
  sql::Stmt q(impl_->db, "SELECT value FROM meta WHERE name='seq'");
  q.step();
}

}  // namespace perfhat::handler
