#include "feedback-handler/store/store.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>
#include <unordered_map>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "common/function_key.h"
#include "feedback-handler/ingest/intake_limits.h"
#include "feedback-handler/store/key_name_index.h"
#include "feedback-handler/store/sql.h"
#include "feedback-handler/util/parallel.h"
#include "feedback-handler/util/rfc3339.h"

namespace perfhat::handler {
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
};
constexpr int kSchemaVersion = static_cast<int>(std::size(kMigrations));

// How a function row takes a later write: non-empty values replace, last_seen only grows.
constexpr const char* kFunctionMerge =
    "mangled=CASE WHEN excluded.mangled<>'' THEN excluded.mangled ELSE functions.mangled END, "
    "file=CASE WHEN excluded.file<>'' THEN excluded.file ELSE functions.file END, "
    "line=CASE WHEN excluded.line<>0 THEN excluded.line ELSE functions.line END, "
    "last_seen_ns=CASE WHEN excluded.last_seen_ns>functions.last_seen_ns "
    "THEN excluded.last_seen_ns ELSE functions.last_seen_ns END, seq=excluded.seq";

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

int64_t floorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

struct Window {
  int64_t from_ns = 0, to_ns = 0;
  int64_t first_bucket() const { return floorDiv(from_ns, kBucketNs); }
  int64_t last_bucket() const { return floorDiv(to_ns - 1, kBucketNs); }
  bool contains(int64_t bucket) const {
    return bucket >= first_bucket() && bucket <= last_bucket();
  }
};

Window resolveWindow(const std::optional<TimeWindow>& w, int64_t now, int64_t default_minutes) {
  Window r{now - default_minutes * kBucketNs, now};
  if (w) {
    if (!w->from.empty()) {
      auto t = parseRfc3339(w->from);
      if (!t) throw std::invalid_argument("range.from is not an RFC 3339 timestamp: " + w->from);
      r.from_ns = *t;
    }
    if (!w->to.empty()) {
      auto t = parseRfc3339(w->to);
      if (!t) throw std::invalid_argument("range.to is not an RFC 3339 timestamp: " + w->to);
      r.to_ns = *t;
    }
  }
  if (r.to_ns <= r.from_ns) throw std::invalid_argument("time window ends before it starts");
  return r;
}

// Every connection to a SQLite store: reads of large batchGets touch many pages, so a 64 MiB
// page cache and memory-mapped I/O avoid a pread per page.
void configureSqlite(sql::Db& db) {
  db.exec("PRAGMA cache_size=-65536");
  db.exec("PRAGMA mmap_size=268435456");
}

// Distribution accumulated over rows, with the buckets it spans (for rates). Rows are merged
// straight from their stored bytes (no intermediate sketch), and an Acc is reused across keys
// (clear() keeps the bin storage), so a batchGet does not allocate per row.
struct Acc {
  DDSketch sketch;
  double x1 = 0, x2 = 0, x3 = 0;
  int line = 0;
  int64_t first = INT64_MAX, last = INT64_MIN;
  bool used() const { return first <= last; }
  // Throws DDSketchError, changing nothing, when the blob is corrupt or of another accuracy.
  void add(std::string_view blob, double a, double b, double c, int l, int64_t bucket) {
    if (!used()) {
      sketch.assignSerialized(blob);  // the first row: a copy instead of a merge into nothing
    } else {
      sketch.mergeSerialized(blob);
    }
    AggValue::addCount(x1, a);
    AggValue::addSum(x2, b);
    AggValue::addCount(x3, c);
    if (l) line = l;
    first = std::min(first, bucket);
    last = std::max(last, bucket);
  }
  void clear() {
    sketch.clear();
    x1 = x2 = x3 = 0;
    line = 0;
    first = INT64_MAX;
    last = INT64_MIN;
  }
  // Seconds of the window the data actually covers: a service that started 10 minutes ago has a
  // rate over 10 minutes, not over the 24 h window.
  double seconds(const Window& w) const {
    if (first > last) return 0;
    double from = static_cast<double>(std::max(w.from_ns, first * kBucketNs));
    double to = static_cast<double>(std::min(w.to_ns, (last + 1) * kBucketNs));
    double s = (to - from) / 1e9;
    return s > 1 ? s : 1;
  }
};

// Counts are at most DDSketch::kMaxCount (1e18 < 2^63); the clamp also keeps a stored extra
// beyond it (or NaN, read as 0) from overflowing the conversion.
uint64_t roundCount(double c) {
  return c > 0 ? static_cast<uint64_t>(std::llround(std::min(c, DDSketch::kMaxCount))) : 0;
}

// x1, x2, x3 as stored, for reading: a row written before they were bounded may hold inf (or a
// NULL read as 0); it reads clamped rather than spreading inf into answers.
double storedCount(double v) { return AggValue::clampExtra(v, DDSketch::kMaxCount); }
double storedSum(double v) { return AggValue::clampExtra(v, DDSketch::kMaxSum); }

// Rows dated beyond now + the clock-skew allowance would lie outside every read window and never
// be purged. The intake refuses them with a reason (intake_limits.h); this is the store's own
// guard for every other writer (sync from an upstream, a future caller): such rows are dropped
// and function and host times are cut to the allowance. Returns `batch` itself when nothing is
// out of range (the usual case), else the screened copy in `kept`.
const Batch& withoutFuture(const Batch& batch, int64_t now_ns, Batch& kept, uint64_t& dropped) {
  const int64_t newest_ns = now_ns > INT64_MAX - IntakeLimits::kClockSkewNs
                                ? INT64_MAX
                                : now_ns + IntakeLimits::kClockSkewNs;
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

// Durations are answered in whole nanoseconds: a sketch 1 % accurate has no digits below them,
// and the shortest form of a fractional value ("2034871.0938261") is half again as many bytes of
// a large answer and several times the cost to write and to parse.
double wholeNs(double ns) { return std::isfinite(ns) ? std::nearbyint(ns) : ns; }

Stats toStats(const Acc& a, const Window& w, const TimeWindow& formatted) {
  Stats s;
  const DDSketch& k = a.sketch;
  s.count = roundCount(k.count());
  s.errors = roundCount(a.x1);
  s.mean_ns = wholeNs(k.mean());
  s.min_ns = wholeNs(k.min());
  s.max_ns = wholeNs(k.max());
  static constexpr double kQs[] = {0.5, 0.9, 0.95, 0.99};
  double q[4];
  k.quantiles(kQs, q);
  s.p50_ns = wholeNs(q[0]);
  s.p90_ns = wholeNs(q[1]);
  s.p95_ns = wholeNs(q[2]);
  s.p99_ns = wholeNs(q[3]);
  s.rate_per_s = k.count() / a.seconds(w);
  s.window = formatted;
  return s;
}

// `values` as a JSON array of strings for sql::jsonEach. Keys are almost always ASCII: they are
// escaped here without building a JSON document; anything else goes through nlohmann, which
// replaces invalid UTF-8 as before.
template <typename Strings>
std::string jsonStringArray(const Strings& values) {
  size_t size = 2;
  for (const auto& v : values) {
    for (unsigned char c : std::string_view(v)) {
      if (c >= 0x80) {
        return nlohmann::json(values).dump(-1, ' ', false,
                                           nlohmann::json::error_handler_t::replace);
      }
    }
    size += v.size() + 3;
  }
  std::string out;
  out.reserve(size);
  out += '[';
  for (const auto& v : values) {
    if (out.size() > 1) out += ',';
    out += '"';
    const std::string_view sv(v);
    size_t run = 0;  // appended in stretches that need no escaping
    for (size_t i = 0; i < sv.size(); ++i) {
      const auto c = static_cast<unsigned char>(sv[i]);
      if (c >= 0x20 && c != '"' && c != '\\') continue;
      out.append(sv, run, i - run);
      run = i + 1;
      if (c == '"' || c == '\\') {
        out += '\\';
        out += sv[i];
      } else {
        static const char* hex = "0123456789abcdef";
        out += "\\u00";
        out += hex[c >> 4];
        out += hex[c & 15];
      }
    }
    out.append(sv, run);
    out += '"';
  }
  out += ']';
  return out;
}

// The aggregate rows of one key, accumulated while its rows stream by and turned into the
// item's statistics when the next key starts. One KeyAcc serves every key of a batchGet, so the
// per-key containers (callers, loops, versions) keep their storage instead of being rebuilt.
struct KeyAcc {
  struct Caller {
    std::string name;
    Acc acc;
  };
  struct Loop {
    int ordinal = 0;
    Acc acc;
  };
  Acc fn_cur, fn_base, sizes;
  std::vector<Caller> callers;  // the first n_callers are this key's
  size_t n_callers = 0;
  std::unordered_map<std::string, size_t> caller_index;  // only for keys with many callers
  std::vector<Loop> loops;
  size_t n_loops = 0;
  std::vector<std::string> versions, services;
  size_t n_versions = 0, n_services = 0;

  void clear() {
    fn_cur.clear();
    fn_base.clear();
    sizes.clear();
    for (size_t i = 0; i < n_callers; ++i) callers[i].acc.clear();
    for (size_t i = 0; i < n_loops; ++i) loops[i].acc.clear();
    n_callers = n_loops = n_versions = n_services = 0;
    if (!caller_index.empty()) caller_index.clear();
  }
  Acc& caller(std::string_view name) {
    constexpr size_t kLinear = 16;  // callers per key are few; index the rest
    if (n_callers <= kLinear) {
      for (size_t i = 0; i < n_callers; ++i) {
        if (callers[i].name == name) return callers[i].acc;
      }
    } else if (auto it = caller_index.find(std::string(name)); it != caller_index.end()) {
      return callers[it->second].acc;
    }
    if (n_callers == callers.size()) callers.emplace_back();
    Caller& c = callers[n_callers++];
    c.name.assign(name);
    if (n_callers > kLinear) {
      if (caller_index.empty()) {
        for (size_t i = 0; i + 1 < n_callers; ++i) caller_index.emplace(callers[i].name, i);
      }
      caller_index.emplace(c.name, n_callers - 1);
    }
    return c.acc;
  }
  Acc& loop(int ordinal) {
    for (size_t i = 0; i < n_loops; ++i) {
      if (loops[i].ordinal == ordinal) return loops[i].acc;
    }
    if (n_loops == loops.size()) loops.emplace_back();
    Loop& l = loops[n_loops++];
    l.ordinal = ordinal;
    return l.acc;
  }
  static void note(std::vector<std::string>& set, size_t& n, std::string_view v) {
    for (size_t i = 0; i < n; ++i) {
      if (set[i] == v) return;
    }
    if (n == set.size()) set.emplace_back();
    set[n++].assign(v);
  }
};

}  // namespace

struct Store::Impl {
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
      configureSqlite(*db);
      readers[i] = std::move(db);
    }
    return *readers[i];
  }
  // Rows as committed by this process (see "Hot rows" in store.h), and whether they exist in
  // the table (an update by primary key) or not yet (an insert).
  struct HotRow {
    AggValue value;
    bool exists = false;
  };
  std::unordered_map<AggKey, HotRow, AggKeyHash> hot;
  int64_t hot_newest_bucket = INT64_MIN;
  // (key, host) → last_seen_ns as stored. A host row only feeds the hosts list and retention, so
  // a newer last_seen within a minute of the stored one is not worth a statement per request.
  std::map<std::pair<std::string, std::string>, int64_t> hot_hosts;

  // The row of `k` (exists = false when there is none). A corrupt stored sketch reads as empty (the
  // merge then overwrites it with the new data: its own data is already lost, and refusing would
  // block every future write of the row).
  HotRow stored(const AggKey& k) {
    sql::Stmt& q = *select_row;
    q.rewind();
    const char kind = static_cast<char>(k.kind);
    bindKey(q, 1, k, kind);
    HotRow r;
    if (q.step()) {
      r.exists = true;
      r.value = storedValue(q, 1);
    }
    q.rewind();
    return r;
  }

  // PostgreSQL: one statement per row costs a round trip to the server (~0.3 ms of CPU on a VM,
  // mostly waking the server process), so writes go in multi-row statements of up to kPgChunk
  // rows, prepared once per (statement, row count): counts are kPgChunk or powers of two below.
  enum class Multi { kSelectRows, kUpsertRows, kUpsertFunctions };
  static constexpr size_t kPgChunk = 128;
  std::map<std::pair<Multi, size_t>, std::unique_ptr<sql::Stmt>> multi_stmts;
  static size_t chunkOf(size_t left) {
    if (left >= kPgChunk) return kPgChunk;
    size_t c = 1;
    while (c * 2 <= left) c *= 2;
    return c;
  }
  sql::Stmt& multi(Multi what, size_t rows) {
    std::unique_ptr<sql::Stmt>& st = multi_stmts[{what, rows}];
    if (st) return *st;
    auto tuples = [rows](int params) {
      std::string t = "(?";
      for (int i = 1; i < params; ++i) t += ",?";
      t += ')';
      std::string out = t;
      for (size_t r = 1; r < rows; ++r) out += "," + t;
      return out;
    };
    std::string q;
    switch (what) {
      case Multi::kSelectRows:
        q = "SELECT key, bucket, kind, sub, service, version, env, origin, sketch, x1, x2, x3, "
            "line FROM aggregates WHERE (key, bucket, kind, sub, service, version, env, origin) "
            "IN (" +
            tuples(8) + ")";
        break;
      case Multi::kUpsertRows:
        q = "INSERT INTO aggregates(key, bucket, kind, sub, service, version, env, origin, sketch, "
            "x1, x2, x3, line, seq) VALUES " +
            tuples(14) +
            " ON CONFLICT(key, bucket, kind, sub, service, version, env, origin) DO UPDATE SET "
            "sketch=excluded.sketch, x1=excluded.x1, x2=excluded.x2, x3=excluded.x3, "
            "line=excluded.line, seq=excluded.seq";
        break;
      case Multi::kUpsertFunctions:
        q = "INSERT INTO functions(key, mangled, file, line, last_seen_ns, seq) VALUES " +
            tuples(6) + " ON CONFLICT(key) DO UPDATE SET " + kFunctionMerge;
        break;
    }
    st = std::make_unique<sql::Stmt>(db, q.c_str());
    return *st;
  }
  // A row's value from its sketch, x1, x2, x3, line columns starting at `c`. A corrupt sketch
  // reads as empty (see stored()).
  static AggValue storedValue(sql::Stmt& q, int c) {
    AggValue v;
    try {
      v.sketch = DDSketch::deserialize(q.blob(c));
      v.x1 = storedCount(q.f64(c + 1));
      v.x2 = storedSum(q.f64(c + 2));
      v.x3 = storedCount(q.f64(c + 3));
      v.line = static_cast<int>(q.i64(c + 4));
    } catch (const DDSketchError&) {
      v = AggValue();
    }
    return v;
  }
  // Binds the 8 key columns of `k` from parameter `p` on; returns the next parameter.
  static int bindKey(sql::Stmt& q, int p, const AggKey& k, const char& kind) {
    q.bindRef(p, k.key).bind(p + 1, k.bucket).bindRef(p + 2, std::string_view(&kind, 1));
    q.bindRef(p + 3, k.sub).bindRef(p + 4, k.service).bindRef(p + 5, k.version);
    q.bindRef(p + 6, k.env).bindRef(p + 7, k.origin);
    return p + 8;
  }
  // Stored values of `keys` (absent rows stay empty), in multi-row selects.
  std::vector<HotRow> storedMany(const std::vector<const AggKey*>& keys) {
    std::vector<HotRow> out(keys.size());
    std::unordered_map<AggKey, size_t, AggKeyHash> index;
    index.reserve(keys.size());
    for (size_t i = 0; i < keys.size(); ++i) index.emplace(*keys[i], i);
    AggKey k;
    for (size_t i = 0; i < keys.size();) {
      const size_t n = chunkOf(keys.size() - i);
      sql::Stmt& q = multi(Multi::kSelectRows, n);
      q.rewind();
      std::vector<char> kinds(n);
      int p = 1;
      for (size_t r = 0; r < n; ++r) {
        kinds[r] = static_cast<char>(keys[i + r]->kind);
        p = bindKey(q, p, *keys[i + r], kinds[r]);
      }
      while (q.step()) {
        k.key = q.text(0);
        k.bucket = q.i64(1);
        // blob(): a view of the column itself (text() returns a temporary string, and a view
        // of that dangles before the next line).
        const std::string_view kind = q.blob(2);
        k.kind = static_cast<AggKind>(kind.empty() ? 0 : kind[0]);
        k.sub = q.text(3);
        k.service = q.text(4);
        k.version = q.text(5);
        k.env = q.text(6);
        k.origin = q.text(7);
        auto it = index.find(k);
        if (it == index.end()) continue;
        out[it->second].value = storedValue(q, 8);
      }
      q.rewind();
      i += n;
    }
    return out;
  }
  // Writes `rows` (key, value) with sequence `seq`, in multi-row upserts.
  void upsertMany(const std::vector<std::pair<AggKey, HotRow>>& rows, int64_t seq) {
    std::vector<std::string> blobs;
    for (size_t i = 0; i < rows.size();) {
      const size_t n = chunkOf(rows.size() - i);
      sql::Stmt& q = multi(Multi::kUpsertRows, n);
      q.rewind();
      blobs.resize(n);
      std::vector<char> kinds(n);
      int p = 1;
      for (size_t r = 0; r < n; ++r) {
        const auto& [k, m] = rows[i + r];
        kinds[r] = static_cast<char>(k.kind);
        blobs[r] = m.value.sketch.serialize();
        p = bindKey(q, p, k, kinds[r]);
        q.bindBlobRef(p, blobs[r]).bind(p + 1, m.value.x1).bind(p + 2, m.value.x2);
        q.bind(p + 3, m.value.x3).bind(p + 4, int64_t{m.value.line}).bind(p + 5, seq);
        p += 6;
      }
      q.step();
      q.rewind();
      i += n;
    }
  }

  // Bounded: rows of old minutes go first (ingest touches the newest ones), then everything.
  void remember(std::vector<std::pair<AggKey, HotRow>>& rows, size_t cap) {
    if (cap == 0) return;
    for (auto& [k, v] : rows) {
      hot_newest_bucket = std::max(hot_newest_bucket, k.bucket);
      hot.insert_or_assign(std::move(k), std::move(v));
    }
    if (hot.size() <= cap) return;
    std::erase_if(hot, [&](const auto& e) { return e.first.bucket < hot_newest_bucket - 1; });
    if (hot.size() > cap) hot.clear();
  }
};

Store::Store(StoreOptions options) : options_(std::move(options)), impl_(std::make_unique<Impl>()) {
  if (!options_.now_ns) options_.now_ns = defaultNow;
  sql::Db& db = impl_->db;
  db = sql::Db::open(options_.path);  // a SQLite file or a postgresql:// URL
  const bool sqlite = db.backend() == sql::Backend::kSqlite;
  impl_->sqlite = sqlite;
  if (sql::isSqliteFile(options_.path)) impl_->read_threads = requestThreads(options_.read_threads);
  if (!sqlite) impl_->replica = replicaOrigin();
  // Checked and migrated under the write lock: replicas starting together migrate once.
  std::optional<sql::Transaction> migrate;
  int current = 0;
  try {
    if (sqlite) {
      db.exec("PRAGMA journal_mode=WAL");
      db.exec(options_.synchronous_full ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL");
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
    throw StoreError("store " + db.describe() + " has schema version " + std::to_string(current) +
                     ", newer than this binary's " + std::to_string(kSchemaVersion));
  }
  for (int v = current + 1; v <= kSchemaVersion; ++v) {
    db.exec(sql::ddl(kMigrations[v - 1], db.backend()).c_str());
    sql::Stmt ins(db, "INSERT INTO schema_migrations(version, applied_at) VALUES(?, ?)");
    ins.bind(1, int64_t{v}).bind(2, formatRfc3339(options_.now_ns()));
    ins.step();
  }
  migrate->commit();
  const char* ins =
      "INSERT INTO aggregates(key, bucket, kind, sub, service, version, env, origin, sketch, x1, "
      "x2, x3, line, seq) VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14) "
      "ON CONFLICT(key, bucket, kind, sub, service, version, env, origin) DO UPDATE SET ";
  impl_->upsert_replace = std::make_unique<sql::Stmt>(
      db,
      (std::string(ins) + "sketch=excluded.sketch, x1=excluded.x1, x2=excluded.x2, x3=excluded.x3, "
                          "line=excluded.line, seq=excluded.seq")
          .c_str());
  impl_->upsert_fn = std::make_unique<sql::Stmt>(
      db, (std::string("INSERT INTO functions(key, mangled, file, line, last_seen_ns, seq) "
                       "VALUES(?1,?2,?3,?4,?5,?6) ON CONFLICT(key) DO UPDATE SET ") +
           kFunctionMerge)
              .c_str());
  impl_->upsert_host = std::make_unique<sql::Stmt>(
      db,
      "INSERT INTO hosts(key, host, last_seen_ns, seq) VALUES(?1,?2,?3,?4) "
      "ON CONFLICT(key, host) DO UPDATE SET last_seen_ns=CASE WHEN "
      "excluded.last_seen_ns>hosts.last_seen_ns THEN excluded.last_seen_ns "
      "ELSE hosts.last_seen_ns END, seq=excluded.seq");
  impl_->select_row = std::make_unique<sql::Stmt>(
      db,
      "SELECT 1, sketch, x1, x2, x3, line FROM aggregates WHERE key=?1 AND bucket=?2 AND "
      "kind=?3 AND sub=?4 AND service=?5 AND version=?6 AND env=?7 AND origin=?8");
  if (sqlite) {
    impl_->insert_row = std::make_unique<sql::Stmt>(
        db,
        "INSERT INTO aggregates(key, bucket, kind, sub, service, version, env, origin, sketch, x1, "
        "x2, x3, line, seq) VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14)");
    // The same parameters as the insert: a row found in the cache or the table is updated in
    // place by its primary key.
    impl_->update_row = std::make_unique<sql::Stmt>(
        db,
        "UPDATE aggregates SET sketch=?9, x1=?10, x2=?11, x3=?12, line=?13, seq=?14 WHERE "
        "key=?1 AND bucket=?2 AND kind=?3 AND sub=?4 AND service=?5 AND version=?6 AND env=?7 "
        "AND origin=?8");
  } else {
    // Same parameters as the insert; the conflict case is a stored row not yet in the cache.
    impl_->insert_row = std::make_unique<sql::Stmt>(
        db, (std::string(ins) + "sketch=excluded.sketch, x1=excluded.x1, x2=excluded.x2, "
                                "x3=excluded.x3, line=excluded.line, seq=excluded.seq")
                .c_str());
  }
  impl_->get_seq = std::make_unique<sql::Stmt>(db, "SELECT value FROM meta WHERE name='seq'");
  impl_->set_seq = std::make_unique<sql::Stmt>(db, "UPDATE meta SET value=? WHERE name='seq'");
  impl_->fn_by_key = std::make_unique<sql::Stmt>(
      db, "SELECT key, mangled, file, line, last_seen_ns FROM functions WHERE key=?");
  impl_->fn_by_mangled = std::make_unique<sql::Stmt>(
      db, "SELECT key, mangled, file, line, last_seen_ns FROM functions WHERE mangled=? LIMIT 1");
}

Store::~Store() = default;

uint64_t Store::write(const Batch& incoming, WriteMode mode) {
  std::lock_guard lock(mu_);
  Impl& im = *impl_;
  Batch screened;
  uint64_t dropped = 0;
  const Batch& batch = withoutFuture(incoming, options_.now_ns(), screened, dropped);
  if (dropped > 0) {
    future_rows_ += dropped;
    std::fprintf(stderr,
                 "perfhat-handler: store: dropped %llu aggregate row(s) dated beyond now + 10 "
                 "minutes (they would never be read or purged)\n",
                 static_cast<unsigned long long>(dropped));
  }
  sql::Transaction tx(im.db);
  sql::Stmt& gs = *im.get_seq;
  gs.reset();
  int64_t seq = gs.step() ? gs.i64(0) + 1 : 1;
  gs.reset();
  sql::Stmt& up = *im.upsert_replace;
  auto put = [&](const AggKey& k, const AggValue& v) {
    std::string blob = v.sketch.serialize();
    char kind = static_cast<char>(k.kind);
    up.reset();
    Impl::bindKey(up, 1, k, kind);
    up.bindBlobRef(9, blob);
    up.bind(10, v.x1).bind(11, v.x2).bind(12, v.x3).bind(13, int64_t{v.line}).bind(14, seq);
    up.step();
  };
  // Merged values, cached only once the transaction commits.
  std::vector<std::pair<AggKey, Impl::HotRow>> merged;
  if (!im.sqlite) {
    // PostgreSQL: the same merge, read and written in multi-row statements (see Impl::multi).
    merged.reserve(batch.aggregates.size());
    std::vector<size_t> misses;
    for (const auto& [ingested, v] : batch.aggregates) {
      const AggKey& k = mode == WriteMode::kMerge ? im.own(ingested) : ingested;
      Impl::HotRow m;
      if (mode == WriteMode::kReplace) {
        im.hot.erase(k);  // replaced rows are re-read when next merged into
        m.value = v;
      } else if (auto h = im.hot.find(k); h != im.hot.end()) {
        m = h->second;
      } else {
        misses.push_back(merged.size());
      }
      merged.emplace_back(k, std::move(m));
    }
    if (!misses.empty()) {
      std::vector<const AggKey*> keys;
      keys.reserve(misses.size());
      for (size_t i : misses) keys.push_back(&merged[i].first);
      std::vector<Impl::HotRow> stored = im.storedMany(keys);
      for (size_t j = 0; j < misses.size(); ++j) merged[misses[j]].second = std::move(stored[j]);
    }
    if (mode == WriteMode::kMerge) {
      size_t i = 0;
      for (const auto& [ingested, v] : batch.aggregates) merged[i++].second.value.merge(v);
    }
    im.upsertMany(merged, seq);
    if (mode == WriteMode::kReplace) merged.clear();  // the cache holds ingest rows only
  } else if (mode == WriteMode::kMerge) {
    merged.reserve(batch.aggregates.size());
    for (const auto& [ingested, v] : batch.aggregates) {
      const AggKey& k = im.own(ingested);
      Impl::HotRow m;
      if (auto h = im.hot.find(k); h != im.hot.end()) {
        m = h->second;
      } else {
        m = im.stored(k);
      }
      m.value.merge(v);
      const std::string blob = m.value.sketch.serialize();
      sql::Stmt& w = m.exists ? *im.update_row : *im.insert_row;
      const char kind = static_cast<char>(k.kind);
      w.rewind();
      Impl::bindKey(w, 1, k, kind);
      w.bindBlobRef(9, blob).bind(10, m.value.x1).bind(11, m.value.x2);
      w.bind(12, m.value.x3).bind(13, int64_t{m.value.line}).bind(14, seq);
      w.step();
      w.rewind();
      // A row gone behind the cache's back would silently drop this data: fail loudly.
      if (m.exists && im.db.changes() != 1) {
        im.hot.clear();
        throw StoreError("store: cached row of " + k.key +
                         " vanished; was the store modified by another process?");
      }
      m.exists = true;
      merged.emplace_back(k, std::move(m));
    }
  } else {
    for (const auto& [k, v] : batch.aggregates) {
      im.hot.erase(k);  // replaced rows are re-read when next merged into
      put(k, v);
    }
  }
  up.reset();
  if (im.sqlite) {
    sql::Stmt& fn = *im.upsert_fn;
    for (const auto& [key, info] : batch.functions) {
      fn.rewind();
      fn.bindRef(1, key).bindRef(2, info.mangled).bindRef(3, info.file);
      fn.bind(4, int64_t{info.line}).bind(5, info.last_seen_ns).bind(6, seq);
      fn.step();
    }
    fn.reset();
  } else {
    auto it = batch.functions.begin();
    for (size_t left = batch.functions.size(); left > 0;) {
      const size_t n = Impl::chunkOf(left);
      sql::Stmt& fn = im.multi(Impl::Multi::kUpsertFunctions, n);
      fn.rewind();
      int p = 1;
      for (size_t r = 0; r < n; ++r, ++it) {
        const auto& [key, info] = *it;
        fn.bindRef(p, key).bindRef(p + 1, info.mangled).bindRef(p + 2, info.file);
        fn.bind(p + 3, int64_t{info.line}).bind(p + 4, info.last_seen_ns).bind(p + 5, seq);
        p += 6;
      }
      fn.step();
      fn.rewind();
      left -= n;
    }
  }
  sql::Stmt& hs = *im.upsert_host;
  std::vector<std::pair<const std::pair<std::string, std::string>*, int64_t>> hosts_written;
  for (const auto& [kh, seen] : batch.hosts) {
    if (auto h = im.hot_hosts.find(kh); h != im.hot_hosts.end() && seen < h->second + kBucketNs) {
      continue;
    }
    hs.rewind();
    hs.bindRef(1, kh.first).bindRef(2, kh.second).bind(3, seen).bind(4, seq);
    hs.step();
    hosts_written.emplace_back(&kh, seen);
  }
  hs.reset();
  if (!batch.meta.empty()) {
    sql::Stmt m(im.db,
                "INSERT INTO meta(name, value) VALUES(?, ?) "
                "ON CONFLICT(name) DO UPDATE SET value=excluded.value");
    for (const auto& [name, value] : batch.meta) {
      if (name == "seq") throw StoreError("store: 'seq' is reserved");
      m.reset();
      m.bind(1, name).bind(2, value);
      m.step();
    }
  }
  sql::Stmt& ss = *im.set_seq;
  ss.reset();
  ss.bind(1, seq);
  ss.step();
  ss.reset();
  tx.commit();
  im.remember(merged, options_.hot_rows);
  if (options_.hot_rows > 0) {
    if (im.hot_hosts.size() + hosts_written.size() > options_.hot_rows) im.hot_hosts.clear();
    for (const auto& [kh, seen] : hosts_written) {
      int64_t& t = im.hot_hosts[*kh];
      t = std::max(t, seen);
    }
  }
  return static_cast<uint64_t>(seq);
}

sql::Backend Store::backend() const { return impl_->db.backend(); }

uint64_t Store::cursor() {
  std::lock_guard lock(mu_);
  sql::Stmt& gs = *impl_->get_seq;
  gs.reset();
  uint64_t v = gs.step() ? static_cast<uint64_t>(gs.i64(0)) : 0;
  gs.reset();
  return v;
}

// batchGet of many keys runs a handful of statements, not several per key: the requested keys go
// to the database as one JSON array (sql::jsonEach) joined against the functions, aggregates and
// hosts tables, each an index lookup or range scan per key inside one statement.
//
// The aggregate rows of one key arrive together (SQLite walks the keys in array order, then the
// primary-key index of each), so they are accumulated in one reused KeyAcc and turned into the
// item as soon as the next key starts: no per-item maps, no intermediate sketches. Should rows
// ever arrive interleaved (another plan, another backend), the statement is run again with an
// ORDER BY that groups them.
BatchGetResponse Store::batchGet(const BatchGetRequest& request, ChunkTeam* team) {
  const int64_t now = options_.now_ns();
  const Window cur = resolveWindow(request.range, now, options_.default_range_minutes);
  std::optional<Window> base;
  if (request.baseline) base = resolveWindow(request.baseline, now, options_.default_range_minutes);
  const int64_t lo = base ? std::min(cur.first_bucket(), base->first_bucket()) : cur.first_bucket();
  const int64_t hi = base ? std::max(cur.last_bucket(), base->last_bucket()) : cur.last_bucket();
  const TimeWindow cur_text{formatRfc3339(cur.from_ns), formatRfc3339(cur.to_ns)};
  const TimeWindow base_text =
      base ? TimeWindow{formatRfc3339(base->from_ns), formatRfc3339(base->to_ns)} : TimeWindow{};

  std::lock_guard lock(mu_);
  Impl& im = *impl_;
  sql::Transaction snapshot(im.db, /*write=*/false);  // one consistent read, one lock
  BatchGetResponse out;
  {
    sql::Stmt& gs = *im.get_seq;
    gs.reset();
    if (gs.step()) out.cursor = std::to_string(gs.i64(0));
    gs.reset();
  }
  auto readInfo = [](sql::Stmt& q, int c, FeedbackItem& item) {
    item.key = q.text(c);
    item.mangled = q.text(c + 1);
    item.file = q.text(c + 2);
    item.line = static_cast<int>(q.i64(c + 3));
    item.last_seen = formatRfc3339(q.i64(c + 4));
  };
  auto lookup = [&](sql::Stmt& q, const std::string& k, FeedbackItem& item) {
    q.reset();
    q.bind(1, k);
    bool found = q.step();
    if (found) readInfo(q, 0, item);
    q.reset();
    return found;
  };

  // 1. Resolve: exact keys in one statement per chunk; the rest by mangled name, normalized
  //    spelling, qualified name (data recorded with code.function.name only has no parameter
  //    list).
  //    One item per stored key, even if asked twice (answered at its first request position).
  constexpr uint32_t kNone = UINT32_MAX;
  const size_t n = request.keys.size();
  std::vector<FeedbackItem> items;  // `by_key` views the keys of its elements in place
  std::vector<size_t> first_request;
  std::vector<uint32_t> item_of(n, kNone);  // request index → position in `items`
  std::unordered_map<std::string_view, uint32_t> by_key;
  by_key.reserve(n);
  auto known = [&](size_t i, std::string_view stored_key) {
    auto it = by_key.find(stored_key);
    if (it == by_key.end()) return false;
    item_of[i] = it->second;
    first_request[it->second] = std::min(first_request[it->second], i);
    return true;
  };
  auto adopt = [&](size_t i) {
    item_of[i] = static_cast<uint32_t>(items.size() - 1);
    first_request.push_back(i);
    by_key.emplace(items.back().key, item_of[i]);
  };
  // Large requests are read in chunks on parallel connections (see step 2): this one, then
  // readers opened here, before any thread uses them. chunksFor(count) opens what `count` items
  // need; inChunks runs fn(chunk, db, begin, end) over them, each chunk in a read transaction of
  // its own connection (all of the same snapshot: mu_ is held).
  std::vector<sql::Db*> dbs{&im.db};
  std::optional<ChunkTeam> own_team;  // one start of threads for both chunked steps
  if (!team && chunkCount(n, Impl::kKeysPerChunk, im.read_threads) > 1) {
    team = &own_team.emplace(im.read_threads);
  }
  auto chunksFor = [&](size_t count) {
    const size_t chunks = chunkCount(count, Impl::kKeysPerChunk, im.read_threads);
    while (dbs.size() < chunks) dbs.push_back(&im.reader(dbs.size() - 1, options_.path));
    return chunks;
  };
  auto inChunks = [&](size_t count, size_t chunks, auto&& fn) {
    forEachChunk(team, count, chunks, [&](size_t c, size_t begin, size_t end) {
      if (c == 0) return fn(c, im.db, begin, end);
      sql::Transaction same_snapshot(*dbs[c], /*write=*/false);
      fn(c, *dbs[c], begin, end);
      same_snapshot.commit();
    });
  };
  {
    // Exact keys, in chunks: each found key's item goes to the slot of its request position.
    std::vector<FeedbackItem> slots(n);
    std::vector<char> hit(n, 0);
    inChunks(n, chunksFor(n), [&](size_t, sql::Db& db, size_t begin, size_t end) {
      sql::Stmt q(db, ("SELECT j.key, f.key, f.mangled, f.file, f.line, f.last_seen_ns FROM " +
                       sql::jsonEach(db.backend(), 1) + " j JOIN functions f ON f.key = j.value")
                          .c_str());
      const std::string arr = jsonStringArray(
          std::vector<std::string_view>(request.keys.begin() + static_cast<ptrdiff_t>(begin),
                                        request.keys.begin() + static_cast<ptrdiff_t>(end)));
      q.bindRef(1, arr);
      while (q.step()) {
        const size_t i = begin + static_cast<size_t>(q.i64(0));
        if (i >= end || hit[i]) continue;
        readInfo(q, 1, slots[i]);
        hit[i] = 1;
      }
    });
    // Usually every key was found, once: then the slots are the items as they are.
    bool dense = std::find(hit.begin(), hit.end(), 0) == hit.end();
    for (size_t i = 0; dense && i < n; ++i) dense = by_key.emplace(slots[i].key, i).second;
    if (dense) {
      items = std::move(slots);  // the elements stay where they are, so by_key's views hold
      std::iota(item_of.begin(), item_of.end(), 0);
      first_request.resize(n);
      std::iota(first_request.begin(), first_request.end(), 0);
    } else {
      by_key.clear();
      items.reserve(n);  // never reallocates from here on
      for (size_t i = 0; i < n; ++i) {
        if (!hit[i] || known(i, slots[i].key)) continue;
        items.push_back(std::move(slots[i]));
        adopt(i);
      }
    }
  }
  std::vector<std::pair<size_t, std::string>> named;  // request position, stored key
  for (size_t i = 0; i < n; ++i) {
    if (item_of[i] != kNone) continue;
    const std::string& requested = request.keys[i];
    if (requested.rfind(kVirtualKeyPrefix, 0) == 0) {
      // Every implementation of a virtual function (the analysis keeps those called from the
      // call's own function, by their call-site data).
      std::string m = memberSignature(
          normalizeFunctionKey(std::string_view(requested).substr(kVirtualKeyPrefix.size())));
      if (const std::vector<std::string>* keys =
              m.empty() ? nullptr : im.names.find(im.db, m, KeyNameIndex::By::kMemberSignature))
        for (const std::string& k : *keys) named.emplace_back(i, k);
      continue;
    }
    FeedbackItem item;
    bool found = lookup(*im.fn_by_mangled, requested, item);
    std::string name;
    if (!found) {
      std::string norm = normalizeFunctionKey(requested);
      name = qualifiedName(norm);
      found = lookup(*im.fn_by_key, norm, item) || lookup(*im.fn_by_key, name, item);
    }
    if (!found && !name.empty()) {
      // Instantiations of a template, other overloads of a name: every stored key of the name,
      // appended below (`by_key` views the keys of `items` in place: it must not reallocate).
      if (const std::vector<std::string>* keys =
              im.names.find(im.db, name, KeyNameIndex::By::kQualifiedName))
        for (const std::string& k : *keys) named.emplace_back(i, k);
      continue;
    }
    if (!found || known(i, item.key)) continue;
    items.push_back(std::move(item));
    adopt(i);
  }
  std::vector<char> extra(items.size(), 0);  // items no request position answers (step 5)
  {
    std::unordered_map<std::string, uint32_t> added;
    for (const auto& [i, k] : named) {
      if (by_key.count(k)) {  // answered already, for the request that named it exactly
        if (item_of[i] == kNone) known(i, k);
        continue;
      }
      uint32_t at;
      if (auto it = added.find(k); it != added.end()) {
        at = it->second;
      } else {
        FeedbackItem item;
        if (!lookup(*im.fn_by_key, k, item)) continue;
        at = static_cast<uint32_t>(items.size());
        items.push_back(std::move(item));
        first_request.push_back(i);
        extra.push_back(1);
        added.emplace(k, at);
      }
      if (item_of[i] == kNone) {
        item_of[i] = at;
        first_request[at] = i;
        extra[at] = 0;
      }
    }
    by_key.clear();  // its views may dangle from here on
  }
  std::vector<std::string_view> stored_keys;
  stored_keys.reserve(items.size());
  for (const FeedbackItem& it : items) stored_keys.push_back(it.key);

  // 2. Every aggregate row of those keys in the windows, accumulated per key, and their hosts:
  //    a statement each per chunk of keys. A large request is split into chunks read in parallel,
  //    each on its own connection (SQLite: see Impl::readers); mu_ is held throughout, so no write
  //    commits between their read transactions and every chunk sees the same snapshot. Per call
  //    site, its raw count and x1 wait for the caller totals of step 3.
  struct CallerFix {
    uint32_t item;
    uint32_t callsite;
    double count, x1;
  };
  std::vector<char> has_data(items.size(), 0), done(items.size(), 0);
  // Reads the aggregates and hosts of items [begin, end) through `db` into those items; call
  // sites go to `fixes`. Touches no state outside its items, so chunks run concurrently.
  auto readChunk = [&](sql::Db& db, size_t begin, size_t end, std::vector<CallerFix>& fixes) {
    std::vector<std::string_view> chunk_keys(stored_keys.begin() + static_cast<ptrdiff_t>(begin),
                                             stored_keys.begin() + static_cast<ptrdiff_t>(end));
    const std::string chunk_arr = jsonStringArray(chunk_keys);
    KeyAcc acc;
    std::vector<uint32_t> order;
    auto finish = [&](size_t idx) {
      done[idx] = 1;
      FeedbackItem& item = items[idx];
      if (!acc.fn_cur.sketch.empty()) item.stats = toStats(acc.fn_cur, cur, cur_text);
      if (base && !acc.fn_base.sketch.empty())
        item.baseline = toStats(acc.fn_base, *base, base_text);
      // Callers by name, then by count (the order of a std::map and then the same std::sort as
      // before: equal counts keep the same, deterministic order).
      order.clear();
      for (uint32_t c = 0; c < acc.n_callers; ++c) {
        if (acc.callers[c].acc.used()) order.push_back(c);
      }
      std::sort(order.begin(), order.end(),
                [&](uint32_t a, uint32_t b) { return acc.callers[a].name < acc.callers[b].name; });
      std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
        return roundCount(acc.callers[a].acc.sketch.count()) >
               roundCount(acc.callers[b].acc.sketch.count());
      });
      item.callsites.reserve(order.size());
      for (uint32_t c : order) {
        const Acc& a = acc.callers[c].acc;
        CallSiteStats& cs = item.callsites.emplace_back();
        cs.caller = acc.callers[c].name;
        cs.count = roundCount(a.sketch.count());
        cs.mean_ns = wholeNs(a.sketch.mean());
        static constexpr double kQs[] = {0.5, 0.9, 0.99};
        double q[3];
        a.sketch.quantiles(kQs, q);
        cs.p50_ns = wholeNs(q[0]);
        cs.p90_ns = wholeNs(q[1]);
        cs.p99_ns = wholeNs(q[2]);
        if (a.x3 > 0) cs.caller_input_size = a.x2 / a.x3;
        fixes.push_back({static_cast<uint32_t>(idx),
                         static_cast<uint32_t>(item.callsites.size() - 1), a.sketch.count(), a.x1});
      }
      size_t loops = 0;
      for (size_t l = 0; l < acc.n_loops; ++l) loops += acc.loops[l].acc.used() ? 1 : 0;
      if (loops > 0) {
        std::sort(acc.loops.begin(), acc.loops.begin() + static_cast<ptrdiff_t>(acc.n_loops),
                  [](const auto& a, const auto& b) { return a.ordinal < b.ordinal; });
        item.loops.reserve(loops);
        for (size_t l = 0; l < acc.n_loops; ++l) {
          const Acc& a = acc.loops[l].acc;
          if (!a.used()) continue;
          LoopStats ls;
          ls.ordinal = acc.loops[l].ordinal;
          ls.line = a.line;
          ls.iterations_mean = a.sketch.mean();
          ls.iterations_p90 = a.sketch.quantile(0.9);
          ls.count = roundCount(a.sketch.count());
          item.loops.push_back(ls);
        }
      }
      if (!acc.sizes.sketch.empty()) {
        const DDSketch& k = acc.sizes.sketch;
        item.result_size = SizeStats{k.mean(), k.quantile(0.9), k.max(), roundCount(k.count())};
      }
      // Sorted and unique, as from the std::set they used to be collected in.
      item.versions.assign(acc.versions.begin(),
                           acc.versions.begin() + static_cast<ptrdiff_t>(acc.n_versions));
      std::sort(item.versions.begin(), item.versions.end());
      item.services.assign(acc.services.begin(),
                           acc.services.begin() + static_cast<ptrdiff_t>(acc.n_services));
      std::sort(item.services.begin(), item.services.end());
      has_data[idx] = !acc.fn_cur.sketch.empty() || loops > 0 || !acc.sizes.sketch.empty();
      acc.clear();
    };
    // Returns false when a key's rows were not contiguous (nothing of the run is kept then).
    auto readAggregates = [&](bool ordered) {
      sql::Stmt q(
          db, ("SELECT j.key, a.kind, a.sub, a.bucket, a.service, a.version, a.sketch, a.x1, a.x2, "
               "a.x3, a.line FROM " +
               sql::jsonEach(db.backend(), 1) +
               " j JOIN aggregates a ON a.key = j.value "
               "AND a.bucket >= ?2 AND a.bucket <= ?3" +
               (ordered ? " ORDER BY j.key, a.bucket, a.kind, a.sub, a.service, a.version, a.env, "
                          "a.origin"
                        : ""))
                  .c_str());
      q.bindRef(1, chunk_arr).bind(2, lo).bind(3, hi);
      size_t current = SIZE_MAX;
      while (q.step()) {
        const auto idx = begin + static_cast<size_t>(q.i64(0));
        if (idx >= end) continue;
        if (idx != current) {
          if (current != SIZE_MAX) finish(current);
          if (done[idx]) return false;
          current = idx;
        }
        const int64_t bucket = q.i64(3);
        const bool in_cur = cur.contains(bucket);
        const bool in_base = base && base->contains(bucket);
        if (!in_cur && !in_base) continue;
        const std::string_view kind = q.blob(1);  // text column, read without a copy
        if (kind != "f" && !in_cur) continue;
        // Columns are read only where the kind uses them: each is an API call per row.
        const std::string_view sketch = q.blob(6);
        try {  // a damaged row loses its own data, not the whole answer
          if (kind == "f") {
            const double x1 = storedCount(q.f64(7));
            if (in_base) acc.fn_base.add(sketch, x1, 0, 0, 0, bucket);
            if (!in_cur) continue;
            acc.fn_cur.add(sketch, x1, 0, 0, 0, bucket);
            if (std::string_view v = q.blob(5); !v.empty()) {
              KeyAcc::note(acc.versions, acc.n_versions, v);
            }
            if (std::string_view sv = q.blob(4); !sv.empty()) {
              KeyAcc::note(acc.services, acc.n_services, sv);
            }
          } else if (kind == "c") {
            acc.caller(q.blob(2)).add(sketch, storedCount(q.f64(7)), storedSum(q.f64(8)),
                                      storedCount(q.f64(9)), 0, bucket);
          } else if (kind == "l") {
            // An ordinal as written by ingest; anything else (from an upstream) reads as 0
            // instead of overflowing atoi.
            const std::string_view ord = q.blob(2);
            int ordinal = 0;
            std::from_chars(ord.data(), ord.data() + ord.size(), ordinal);
            acc.loop(ordinal).add(sketch, 0, 0, 0, static_cast<int>(q.i64(10)), bucket);
          } else if (kind == "s") {
            acc.sizes.add(sketch, 0, 0, 0, 0, bucket);
          }
        } catch (const DDSketchError&) {
        }
      }
      if (current != SIZE_MAX) finish(current);
      return true;
    };
    // PostgreSQL may return a join in any order; SQLite's nested loop keeps keys together.
    if (!readAggregates(/*ordered=*/!im.sqlite)) {
      acc.clear();
      fixes.clear();
      std::fill(done.begin() + static_cast<ptrdiff_t>(begin),
                done.begin() + static_cast<ptrdiff_t>(end), 0);
      std::fill(has_data.begin() + static_cast<ptrdiff_t>(begin),
                has_data.begin() + static_cast<ptrdiff_t>(end), 0);
      for (size_t i = begin; i < end; ++i) {
        FeedbackItem& item = items[i];
        item.stats.reset();
        item.baseline.reset();
        item.callsites.clear();
        item.loops.clear();
        item.result_size.reset();
        item.versions.clear();
        item.services.clear();
      }
      readAggregates(/*ordered=*/true);
    }
    // The hosts of the chunk's keys.
    sql::Stmt h(db, ("SELECT j.key, h.host FROM " + sql::jsonEach(db.backend(), 1) +
                     " j JOIN hosts h ON h.key = j.value ORDER BY j.key, h.host")
                        .c_str());
    h.bindRef(1, chunk_arr);
    while (h.step()) {
      const auto idx = begin + static_cast<size_t>(h.i64(0));
      if (idx < end) items[idx].hosts.push_back(h.text(1));
    }
  };
  std::vector<CallerFix> fixes;
  {
    const size_t chunks = chunksFor(items.size());
    std::vector<std::vector<CallerFix>> chunk_fixes(chunks);
    inChunks(items.size(), chunks, [&](size_t c, sql::Db& db, size_t begin, size_t end) {
      readChunk(db, begin, end, chunk_fixes[c]);
    });
    for (size_t c = 0; c < chunks; ++c) {
      fixes.insert(fixes.end(), chunk_fixes[c].begin(), chunk_fixes[c].end());
    }
  }

  // 3. Function totals of every caller in the current window (for rates per caller).
  std::unordered_map<std::string, Acc> caller_totals;
  {
    std::vector<std::string_view> callers;
    for (const CallerFix& f : fixes) {
      const std::string& caller = items[f.item].callsites[f.callsite].caller;
      if (auto [it, fresh] = caller_totals.try_emplace(caller); fresh) callers.push_back(it->first);
    }
    if (!callers.empty()) {
      sql::Stmt q(im.db,
                  ("SELECT j.value, a.sketch, a.bucket FROM " + sql::jsonEach(im.db.backend(), 1) +
                   " j JOIN aggregates a "
                   "ON a.key = j.value AND a.bucket >= ?2 AND a.bucket <= ?3 AND a.kind = 'f'")
                      .c_str());
      const std::string arr = jsonStringArray(callers);
      q.bindRef(1, arr).bind(2, cur.first_bucket()).bind(3, cur.last_bucket());
      while (q.step()) {
        auto it = caller_totals.find(q.text(0));
        if (it == caller_totals.end()) continue;
        try {
          it->second.add(q.blob(1), 0, 0, 0, 0, q.i64(2));
        } catch (const DDSketchError&) {
        }
      }
    }
    for (const CallerFix& f : fixes) {
      CallSiteStats& cs = items[f.item].callsites[f.callsite];
      const Acc& ct = caller_totals[cs.caller];
      if (!ct.sketch.empty()) {
        cs.caller_rate_per_s = ct.sketch.count() / ct.seconds(cur);
        cs.calls_per_parent = f.count / ct.sketch.count();
      } else if (f.x1 > 0) {
        cs.calls_per_parent = f.count / f.x1;
      }
    }
  }

  // 4. Calls each service's exporters reported lost in the window (AggKind::kDropped): the
  //    counts of that service's functions are low by up to that much, so readers show it there.
  {
    std::unordered_map<std::string, double> lost;
    sql::Stmt q(im.db,
                "SELECT service, SUM(x1) FROM aggregates WHERE key = '' AND bucket >= ?1 AND "
                "bucket <= ?2 AND kind = 'd' GROUP BY service");
    q.bind(1, cur.first_bucket()).bind(2, cur.last_bucket());
    while (q.step()) lost[q.text(0)] += q.f64(1);
    for (size_t i = 0; !lost.empty() && i < items.size(); ++i) {
      for (const std::string& service : items[i].services) {
        if (auto it = lost.find(service); it != lost.end()) items[i].dropped_calls += it->second;
      }
    }
  }

  snapshot.commit();

  // 5. Items in request order; keys without data in the window are missing. Usually every key
  //    was found by the first statement, in request order, once, with data: then `items` is the
  //    answer as it is (moving 10,000 items one by one into a fresh vector cost ~5 % of a call).
  bool as_is = items.size() == n;
  for (size_t i = 0; as_is && i < n; ++i) as_is = item_of[i] == i && has_data[i];
  if (as_is) {
    out.items = std::move(items);
    return out;
  }
  out.items.reserve(items.size());
  for (size_t i = 0; i < n; ++i) {
    const uint32_t idx = item_of[i];
    if (idx != kNone && first_request[idx] != i) continue;  // a repeat of a key already answered
    if (idx == kNone || !has_data[idx]) {
      out.missing.push_back(request.keys[i]);
    } else {
      out.items.push_back(std::move(items[idx]));
    }
  }
  for (size_t idx = 0; idx < extra.size(); ++idx)
    if (extra[idx] && has_data[idx]) out.items.push_back(std::move(items[idx]));
  return out;
}

ChangesPage Store::changes(uint64_t since, size_t limit) {
  std::lock_guard lock(mu_);
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

ExportPage Store::exportSince(uint64_t since, size_t max_rows) {
  std::lock_guard lock(mu_);
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
  std::lock_guard lock(mu_);
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
  im.hot.clear();  // purged rows must not come back through a merge
  im.hot_hosts.clear();
  return removed;
}

int64_t Store::meta(const std::string& name, int64_t fallback) {
  std::lock_guard lock(mu_);
  sql::Stmt q(impl_->db, "SELECT value FROM meta WHERE name=?");
  q.bind(1, name);
  return q.step() ? q.i64(0) : fallback;
}

uint64_t Store::aggregateCount() {
  std::lock_guard lock(mu_);
  sql::Stmt q(impl_->db, "SELECT COUNT(*) FROM aggregates");
  return q.step() ? static_cast<uint64_t>(q.i64(0)) : 0;
}

void Store::ping() {
  std::lock_guard lock(mu_);
  sql::Stmt q(impl_->db, "SELECT value FROM meta WHERE name='seq'");
  q.step();
}

}  // namespace perfhat::handler
