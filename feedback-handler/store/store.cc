#include "feedback-handler/store/store.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>
#include <unordered_map>

#include "common/function_key.h"
#include "feedback-handler/util/rfc3339.h"

namespace perfhat::handler {
namespace {

// Append-only list: migration N is kMigrations[N-1]. Never edit a shipped entry; add one.
// The SQL is plain (no SQLite-only types) so the same text can serve PostgreSQL later.
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
};
constexpr int kSchemaVersion = static_cast<int>(std::size(kMigrations));

// SQL function perfhat_sketch_merge(old, new): the exact merge inside the upsert, so a batch is
// one statement per aggregate. A corrupt stored blob is replaced by the new one (its data is
// already lost; refusing would block every future write of that row).
void sketchMergeFn(sqlite3_context* ctx, int, sqlite3_value** argv) {
  std::string_view a(static_cast<const char*>(sqlite3_value_blob(argv[0])),
                     static_cast<size_t>(sqlite3_value_bytes(argv[0])));
  std::string_view b(static_cast<const char*>(sqlite3_value_blob(argv[1])),
                     static_cast<size_t>(sqlite3_value_bytes(argv[1])));
  try {
    DDSketch merged = DDSketch::deserialize(b);
    try {
      DDSketch old = DDSketch::deserialize(a);
      old.merge(merged);
      merged = std::move(old);
    } catch (const DDSketchError&) {
    }
    std::string out = merged.serialize();
    sqlite3_result_blob(ctx, out.data(), static_cast<int>(out.size()), SQLITE_TRANSIENT);
  } catch (const std::exception& e) {
    sqlite3_result_error(ctx, e.what(), -1);
  }
}

int64_t defaultNow() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int64_t floorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

struct Window {
  int64_t from_ns = 0, to_ns = 0;
  int64_t first_bucket() const { return floorDiv(from_ns, kBucketNs); }
  int64_t last_bucket() const { return floorDiv(to_ns - 1, kBucketNs); }
  bool contains(int64_t bucket) const { return bucket >= first_bucket() && bucket <= last_bucket(); }
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

// Distribution accumulated over rows, with the buckets it spans (for rates).
struct Acc {
  DDSketch sketch;
  double x1 = 0, x2 = 0, x3 = 0;
  int line = 0;
  int64_t first = INT64_MAX, last = INT64_MIN;
  void add(const DDSketch& s, double a, double b, double c, int l, int64_t bucket) {
    sketch.merge(s);
    x1 += a;
    x2 += b;
    x3 += c;
    if (l) line = l;
    first = std::min(first, bucket);
    last = std::max(last, bucket);
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

uint64_t roundCount(double c) { return c > 0 ? static_cast<uint64_t>(std::llround(c)) : 0; }

Stats toStats(const Acc& a, const Window& w) {
  Stats s;
  const DDSketch& k = a.sketch;
  s.count = roundCount(k.count());
  s.errors = roundCount(a.x1);
  s.mean_ns = k.mean();
  s.min_ns = k.min();
  s.max_ns = k.max();
  s.p50_ns = k.quantile(0.5);
  s.p90_ns = k.quantile(0.9);
  s.p95_ns = k.quantile(0.95);
  s.p99_ns = k.quantile(0.99);
  s.rate_per_s = k.count() / a.seconds(w);
  s.window = {formatRfc3339(w.from_ns), formatRfc3339(w.to_ns)};
  return s;
}

}  // namespace

struct Store::Impl {
  Db db;
  std::unique_ptr<Stmt> upsert_merge, upsert_replace, upsert_fn, upsert_host, get_seq, set_seq;
  std::unique_ptr<Stmt> fn_by_key, fn_by_mangled, rows_for_key, fn_rows_for_key, hosts_for_key;
};

Store::Store(StoreOptions options) : options_(std::move(options)), impl_(std::make_unique<Impl>()) {
  if (!options_.now_ns) options_.now_ns = defaultNow;
  Db& db = impl_->db;
  db = Db(options_.path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  if (sqlite3_db_readonly(db.get(), "main") == 1) {
    throw StoreError("store " + options_.path + " is read-only (check file permissions)");
  }
  sqlite3_busy_timeout(db.get(), 5000);
  try {
    db.exec("PRAGMA journal_mode=WAL");
    db.exec(options_.synchronous_full ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL");
    // Reads of large batchGets touch many pages: a 64 MiB page cache and memory-mapped I/O
    // avoid a pread per page.
    db.exec("PRAGMA cache_size=-65536");
    db.exec("PRAGMA mmap_size=268435456");
    db.exec("CREATE TABLE IF NOT EXISTS schema_migrations(version INTEGER PRIMARY KEY, "
            "applied_at TEXT NOT NULL)");
  } catch (const StoreError& e) {
    throw StoreError("cannot use store " + options_.path + ": " + e.what());
  }
  int current = 0;
  {
    Stmt s(db, "SELECT COALESCE(MAX(version), 0) FROM schema_migrations");
    if (s.step()) current = static_cast<int>(s.i64(0));
  }
  if (current > kSchemaVersion) {
    throw StoreError("store " + options_.path + " has schema version " + std::to_string(current) +
                     ", newer than this binary's " + std::to_string(kSchemaVersion));
  }
  for (int v = current + 1; v <= kSchemaVersion; ++v) {
    Transaction tx(db);
    db.exec(kMigrations[v - 1]);
    Stmt ins(db, "INSERT INTO schema_migrations(version, applied_at) VALUES(?, ?)");
    ins.bind(1, int64_t{v}).bind(2, formatRfc3339(options_.now_ns()));
    ins.step();
    tx.commit();
  }
  if (sqlite3_create_function_v2(db.get(), "perfhat_sketch_merge", 2,
                                 SQLITE_UTF8 | SQLITE_DETERMINISTIC, nullptr, sketchMergeFn,
                                 nullptr, nullptr, nullptr) != SQLITE_OK) {
    db.fail("store: cannot register sketch merge");
  }
  const char* ins =
      "INSERT INTO aggregates(key, bucket, kind, sub, service, version, env, origin, sketch, x1, "
      "x2, x3, line, seq) VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14) "
      "ON CONFLICT(key, bucket, kind, sub, service, version, env, origin) DO UPDATE SET ";
  impl_->upsert_merge = std::make_unique<Stmt>(
      db, (std::string(ins) +
           "sketch=perfhat_sketch_merge(sketch, excluded.sketch), x1=x1+excluded.x1, "
           "x2=x2+excluded.x2, x3=x3+excluded.x3, "
           "line=CASE WHEN excluded.line<>0 THEN excluded.line ELSE line END, seq=excluded.seq")
              .c_str());
  impl_->upsert_replace = std::make_unique<Stmt>(
      db, (std::string(ins) +
           "sketch=excluded.sketch, x1=excluded.x1, x2=excluded.x2, x3=excluded.x3, "
           "line=excluded.line, seq=excluded.seq")
              .c_str());
  impl_->upsert_fn = std::make_unique<Stmt>(
      db,
      "INSERT INTO functions(key, mangled, file, line, last_seen_ns, seq) VALUES(?1,?2,?3,?4,?5,?6) "
      "ON CONFLICT(key) DO UPDATE SET "
      "mangled=CASE WHEN excluded.mangled<>'' THEN excluded.mangled ELSE mangled END, "
      "file=CASE WHEN excluded.file<>'' THEN excluded.file ELSE file END, "
      "line=CASE WHEN excluded.line<>0 THEN excluded.line ELSE line END, "
      "last_seen_ns=max(last_seen_ns, excluded.last_seen_ns), seq=excluded.seq");
  impl_->upsert_host = std::make_unique<Stmt>(
      db,
      "INSERT INTO hosts(key, host, last_seen_ns, seq) VALUES(?1,?2,?3,?4) "
      "ON CONFLICT(key, host) DO UPDATE SET last_seen_ns=max(last_seen_ns, excluded.last_seen_ns),"
      " seq=excluded.seq");
  impl_->get_seq = std::make_unique<Stmt>(db, "SELECT value FROM meta WHERE name='seq'");
  impl_->set_seq = std::make_unique<Stmt>(db, "UPDATE meta SET value=? WHERE name='seq'");
  impl_->fn_by_key = std::make_unique<Stmt>(
      db, "SELECT key, mangled, file, line, last_seen_ns FROM functions WHERE key=?");
  impl_->fn_by_mangled = std::make_unique<Stmt>(
      db, "SELECT key, mangled, file, line, last_seen_ns FROM functions WHERE mangled=? LIMIT 1");
  impl_->rows_for_key = std::make_unique<Stmt>(
      db,
      "SELECT kind, sub, bucket, service, version, sketch, x1, x2, x3, line FROM aggregates "
      "WHERE key=? AND bucket>=? AND bucket<=?");
  impl_->fn_rows_for_key = std::make_unique<Stmt>(
      db,
      "SELECT sketch, bucket FROM aggregates WHERE key=? AND bucket>=? AND bucket<=? AND kind='f'");
  impl_->hosts_for_key =
      std::make_unique<Stmt>(db, "SELECT host FROM hosts WHERE key=? ORDER BY host");
}

Store::~Store() = default;

uint64_t Store::write(const Batch& batch, WriteMode mode) {
  std::lock_guard lock(mu_);
  Impl& im = *impl_;
  Transaction tx(im.db);
  Stmt& gs = *im.get_seq;
  gs.reset();
  int64_t seq = gs.step() ? gs.i64(0) + 1 : 1;
  gs.reset();
  Stmt& up = mode == WriteMode::kMerge ? *im.upsert_merge : *im.upsert_replace;
  for (const auto& [k, v] : batch.aggregates) {
    std::string blob = v.sketch.serialize();
    char kind = static_cast<char>(k.kind);
    up.reset();
    up.bind(1, k.key).bind(2, k.bucket).bind(3, std::string_view(&kind, 1)).bind(4, k.sub);
    up.bind(5, k.service).bind(6, k.version).bind(7, k.env).bind(8, k.origin).bindBlob(9, blob);
    up.bind(10, v.x1).bind(11, v.x2).bind(12, v.x3).bind(13, int64_t{v.line}).bind(14, seq);
    up.step();
  }
  up.reset();
  Stmt& fn = *im.upsert_fn;
  for (const auto& [key, info] : batch.functions) {
    fn.reset();
    fn.bind(1, key).bind(2, info.mangled).bind(3, info.file).bind(4, int64_t{info.line});
    fn.bind(5, info.last_seen_ns).bind(6, seq);
    fn.step();
  }
  fn.reset();
  Stmt& hs = *im.upsert_host;
  for (const auto& [kh, seen] : batch.hosts) {
    hs.reset();
    hs.bind(1, kh.first).bind(2, kh.second).bind(3, seen).bind(4, seq);
    hs.step();
  }
  hs.reset();
  if (!batch.meta.empty()) {
    Stmt m(im.db, "INSERT INTO meta(name, value) VALUES(?, ?) "
                  "ON CONFLICT(name) DO UPDATE SET value=excluded.value");
    for (const auto& [name, value] : batch.meta) {
      if (name == "seq") throw StoreError("store: 'seq' is reserved");
      m.reset();
      m.bind(1, name).bind(2, value);
      m.step();
    }
  }
  Stmt& ss = *im.set_seq;
  ss.reset();
  ss.bind(1, seq);
  ss.step();
  ss.reset();
  tx.commit();
  return static_cast<uint64_t>(seq);
}

uint64_t Store::cursor() {
  std::lock_guard lock(mu_);
  Stmt& gs = *impl_->get_seq;
  gs.reset();
  uint64_t v = gs.step() ? static_cast<uint64_t>(gs.i64(0)) : 0;
  gs.reset();
  return v;
}

BatchGetResponse Store::batchGet(const BatchGetRequest& request) {
  const int64_t now = options_.now_ns();
  const Window cur = resolveWindow(request.range, now, options_.default_range_minutes);
  std::optional<Window> base;
  if (request.baseline) base = resolveWindow(request.baseline, now, options_.default_range_minutes);
  const int64_t lo = base ? std::min(cur.first_bucket(), base->first_bucket()) : cur.first_bucket();
  const int64_t hi = base ? std::max(cur.last_bucket(), base->last_bucket()) : cur.last_bucket();

  std::lock_guard lock(mu_);
  Impl& im = *impl_;
  Transaction snapshot(im.db, /*write=*/false);  // one consistent read, one lock
  BatchGetResponse out;
  {
    Stmt& gs = *im.get_seq;
    gs.reset();
    if (gs.step()) out.cursor = std::to_string(gs.i64(0));
    gs.reset();
  }
  // Caller totals in the current window, memoized across the request (for rates per caller).
  std::unordered_map<std::string, Acc> caller_totals;
  auto callerTotal = [&](const std::string& caller) -> const Acc& {
    auto [it, inserted] = caller_totals.try_emplace(caller);
    if (inserted) {
      Stmt& q = *im.fn_rows_for_key;
      q.reset();
      q.bind(1, caller).bind(2, cur.first_bucket()).bind(3, cur.last_bucket());
      while (q.step()) {
        try {
          it->second.add(DDSketch::deserialize(q.blob(0)), 0, 0, 0, 0, q.i64(1));
        } catch (const DDSketchError&) {
        }
      }
      q.reset();
    }
    return it->second;
  };
  auto lookup = [&](Stmt& q, const std::string& k, FeedbackItem& item) {
    q.reset();
    q.bind(1, k);
    bool found = q.step();
    if (found) {
      item.key = q.text(0);
      item.mangled = q.text(1);
      item.file = q.text(2);
      item.line = static_cast<int>(q.i64(3));
      item.last_seen = formatRfc3339(q.i64(4));
    }
    q.reset();
    return found;
  };

  std::set<std::string> seen_keys;  // one item per stored key, even if asked twice
  for (const std::string& requested : request.keys) {
    FeedbackItem item;
    // Exact key → mangled name → normalized spelling → qualified name (data recorded with
    // code.function.name only has no parameter list).
    bool found = lookup(*im.fn_by_key, requested, item) ||
                 lookup(*im.fn_by_mangled, requested, item);
    if (!found) {
      std::string norm = normalizeFunctionKey(requested);
      found = lookup(*im.fn_by_key, norm, item) ||
              lookup(*im.fn_by_key, qualifiedName(norm), item);
    }
    if (!found || !seen_keys.insert(item.key).second) {
      if (!found) out.missing.push_back(requested);
      continue;
    }
    Acc fn_cur, fn_base, sizes;
    std::map<std::string, Acc> callers;
    std::map<int, Acc> loops;
    std::set<std::string> versions, services;
    Stmt& q = *im.rows_for_key;
    q.reset();
    q.bind(1, item.key).bind(2, lo).bind(3, hi);
    while (q.step()) {
      const int64_t bucket = q.i64(2);
      const bool in_cur = cur.contains(bucket);
      const bool in_base = base && base->contains(bucket);
      if (!in_cur && !in_base) continue;
      DDSketch sk;
      try {
        sk = DDSketch::deserialize(q.blob(5));
      } catch (const DDSketchError&) {
        continue;  // a damaged row loses its own data, not the whole answer
      }
      const std::string kind = q.text(0);
      const double x1 = q.f64(6), x2 = q.f64(7), x3 = q.f64(8);
      const int line = static_cast<int>(q.i64(9));
      if (kind == "f") {
        if (in_base) fn_base.add(sk, x1, 0, 0, 0, bucket);
        if (!in_cur) continue;
        fn_cur.add(sk, x1, 0, 0, 0, bucket);
        if (std::string v = q.text(4); !v.empty()) versions.insert(v);
        if (std::string s = q.text(3); !s.empty()) services.insert(s);
      } else if (!in_cur) {
        continue;
      } else if (kind == "c") {
        callers[q.text(1)].add(sk, x1, x2, x3, 0, bucket);
      } else if (kind == "l") {
        loops[std::atoi(q.text(1).c_str())].add(sk, 0, 0, 0, line, bucket);
      } else if (kind == "s") {
        sizes.add(sk, 0, 0, 0, 0, bucket);
      }
    }
    q.reset();
    if (fn_cur.sketch.empty() && loops.empty() && sizes.sketch.empty()) {
      out.missing.push_back(requested);
      continue;
    }
    if (!fn_cur.sketch.empty()) item.stats = toStats(fn_cur, cur);
    if (base && !fn_base.sketch.empty()) item.baseline = toStats(fn_base, *base);
    for (auto& [caller, a] : callers) {
      CallSiteStats cs;
      cs.caller = caller;
      cs.count = roundCount(a.sketch.count());
      cs.mean_ns = a.sketch.mean();
      cs.p50_ns = a.sketch.quantile(0.5);
      cs.p90_ns = a.sketch.quantile(0.9);
      cs.p99_ns = a.sketch.quantile(0.99);
      const Acc& ct = callerTotal(caller);
      if (!ct.sketch.empty()) {
        cs.caller_rate_per_s = ct.sketch.count() / ct.seconds(cur);
        cs.calls_per_parent = a.sketch.count() / ct.sketch.count();
      } else if (a.x1 > 0) {
        cs.calls_per_parent = a.sketch.count() / a.x1;
      }
      if (a.x3 > 0) cs.caller_input_size = a.x2 / a.x3;
      item.callsites.push_back(std::move(cs));
    }
    std::sort(item.callsites.begin(), item.callsites.end(),
              [](const auto& a, const auto& b) { return a.count > b.count; });
    for (auto& [ordinal, a] : loops) {
      LoopStats ls;
      ls.ordinal = ordinal;
      ls.line = a.line;
      ls.iterations_mean = a.sketch.mean();
      ls.iterations_p90 = a.sketch.quantile(0.9);
      ls.count = roundCount(a.sketch.count());
      item.loops.push_back(ls);
    }
    if (!sizes.sketch.empty()) {
      item.result_size = SizeStats{sizes.sketch.mean(), sizes.sketch.quantile(0.9),
                                   sizes.sketch.max(), roundCount(sizes.sketch.count())};
    }
    item.versions.assign(versions.begin(), versions.end());
    item.services.assign(services.begin(), services.end());
    Stmt& h = *im.hosts_for_key;
    h.reset();
    h.bind(1, item.key);
    while (h.step()) item.hosts.push_back(h.text(0));
    h.reset();
    out.items.push_back(std::move(item));
  }
  snapshot.commit();
  return out;
}

ChangesPage Store::changes(uint64_t since, size_t limit) {
  std::lock_guard lock(mu_);
  Impl& im = *impl_;
  ChangesPage page;
  Stmt gs(im.db, "SELECT value FROM meta WHERE name='seq'");
  page.cursor = gs.step() ? static_cast<uint64_t>(gs.i64(0)) : 0;
  Stmt q(im.db, "SELECT key, seq FROM functions WHERE seq>? ORDER BY seq LIMIT ?");
  q.bind(1, static_cast<int64_t>(since)).bind(2, static_cast<int64_t>(limit));
  int64_t last = 0;
  while (q.step()) {
    page.keys.push_back(q.text(0));
    last = q.i64(1);
  }
  if (page.keys.size() >= limit) {
    // Truncated: finish the last sequence so the cursor never splits a write.
    Stmt rest(im.db, "SELECT key FROM functions WHERE seq=? ORDER BY key");
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
  Stmt gs(im.db, "SELECT value FROM meta WHERE name='seq'");
  int64_t upto = gs.step() ? gs.i64(0) : 0;
  Stmt cut(im.db, "SELECT seq FROM aggregates WHERE seq>? ORDER BY seq LIMIT 1 OFFSET ?");
  cut.bind(1, static_cast<int64_t>(since)).bind(2, static_cast<int64_t>(std::max<size_t>(max_rows, 1) - 1));
  if (cut.step() && cut.i64(0) < upto) {
    upto = cut.i64(0);
    page.more = true;
  }
  page.cursor = static_cast<uint64_t>(upto);
  Stmt q(im.db,
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
    v.x1 = q.f64(9);
    v.x2 = q.f64(10);
    v.x3 = q.f64(11);
    v.line = static_cast<int>(q.i64(12));
    page.rows.aggregates.emplace(std::move(k), std::move(v));
  }
  Stmt f(im.db,
         "SELECT key, mangled, file, line, last_seen_ns FROM functions WHERE seq>? AND seq<=?");
  f.bind(1, static_cast<int64_t>(since)).bind(2, upto);
  while (f.step()) {
    page.rows.functions[f.text(0)] =
        FunctionInfo{f.text(1), f.text(2), static_cast<int>(f.i64(3)), f.i64(4)};
  }
  Stmt h(im.db, "SELECT key, host, last_seen_ns FROM hosts WHERE seq>? AND seq<=?");
  h.bind(1, static_cast<int64_t>(since)).bind(2, upto);
  while (h.step()) page.rows.hosts[{h.text(0), h.text(1)}] = h.i64(2);
  return page;
}

int64_t Store::purge() {
  const int64_t cutoff_bucket = floorDiv(options_.now_ns(), kBucketNs) - options_.retention_minutes;
  std::lock_guard lock(mu_);
  Impl& im = *impl_;
  Transaction tx(im.db);
  Stmt d(im.db, "DELETE FROM aggregates WHERE bucket<?");
  d.bind(1, cutoff_bucket);
  d.step();
  int64_t removed = sqlite3_changes(im.db.get());
  Stmt df(im.db, "DELETE FROM functions WHERE last_seen_ns<?");
  df.bind(1, cutoff_bucket * kBucketNs);
  df.step();
  Stmt dh(im.db, "DELETE FROM hosts WHERE last_seen_ns<?");
  dh.bind(1, cutoff_bucket * kBucketNs);
  dh.step();
  tx.commit();
  return removed;
}

int64_t Store::meta(const std::string& name, int64_t fallback) {
  std::lock_guard lock(mu_);
  Stmt q(impl_->db, "SELECT value FROM meta WHERE name=?");
  q.bind(1, name);
  return q.step() ? q.i64(0) : fallback;
}

uint64_t Store::aggregateCount() {
  std::lock_guard lock(mu_);
  Stmt q(impl_->db, "SELECT COUNT(*) FROM aggregates");
  return q.step() ? static_cast<uint64_t>(q.i64(0)) : 0;
}

void Store::ping() {
  std::lock_guard lock(mu_);
  Stmt q(impl_->db, "SELECT value FROM meta WHERE name='seq'");
  q.step();
}

}  // namespace perfhat::handler
