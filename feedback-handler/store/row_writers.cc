// How a batch becomes rows: the prepared statements, the SQLite writer (one statement per row,
// merged against the row cache), the PostgreSQL writer (multi-row statements), and the
// function, host and meta rows both share.
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "feedback-handler/store/row_accumulator.h"
#include "feedback-handler/store/store_impl.h"

namespace perfhat::handler {

using store_detail::storedCount;
using store_detail::storedSum;

void Store::Impl::prepareStatements() {
  const char* ins =
      "INSERT INTO aggregates(key, bucket, kind, sub, service, version, env, origin, sketch, x1, "
      "x2, x3, line, seq) VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14) "
      "ON CONFLICT(key, bucket, kind, sub, service, version, env, origin) DO UPDATE SET ";
  upsert_replace = std::make_unique<sql::Stmt>(
      db,
      (std::string(ins) + "sketch=excluded.sketch, x1=excluded.x1, x2=excluded.x2, x3=excluded.x3, "
                          "line=excluded.line, seq=excluded.seq")
          .c_str());
  upsert_fn = std::make_unique<sql::Stmt>(
      db, (std::string("INSERT INTO functions(key, mangled, file, line, last_seen_ns, seq) "
                       "VALUES(?1,?2,?3,?4,?5,?6) ON CONFLICT(key) DO UPDATE SET ") +
           schema::kFunctionMerge)
              .c_str());
  upsert_host = std::make_unique<sql::Stmt>(
      db,
      "INSERT INTO hosts(key, host, last_seen_ns, seq) VALUES(?1,?2,?3,?4) "
      "ON CONFLICT(key, host) DO UPDATE SET last_seen_ns=CASE WHEN "
      "excluded.last_seen_ns>hosts.last_seen_ns THEN excluded.last_seen_ns "
      "ELSE hosts.last_seen_ns END, seq=excluded.seq");
  select_row = std::make_unique<sql::Stmt>(
      db,
      "SELECT 1, sketch, x1, x2, x3, line FROM aggregates WHERE key=?1 AND bucket=?2 AND "
      "kind=?3 AND sub=?4 AND service=?5 AND version=?6 AND env=?7 AND origin=?8");
  if (sqlite) {
    insert_row = std::make_unique<sql::Stmt>(
        db,
        "INSERT INTO aggregates(key, bucket, kind, sub, service, version, env, origin, sketch, x1, "
        "x2, x3, line, seq) VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14)");
    // The same parameters as the insert: a row found in the cache or the table is updated in
    // place by its primary key.
    update_row = std::make_unique<sql::Stmt>(
        db,
        "UPDATE aggregates SET sketch=?9, x1=?10, x2=?11, x3=?12, line=?13, seq=?14 WHERE "
        "key=?1 AND bucket=?2 AND kind=?3 AND sub=?4 AND service=?5 AND version=?6 AND env=?7 "
        "AND origin=?8");
  } else {
    // Same parameters as the insert; the conflict case is a stored row not yet in the cache.
    insert_row = std::make_unique<sql::Stmt>(
        db, (std::string(ins) + "sketch=excluded.sketch, x1=excluded.x1, x2=excluded.x2, "
                                "x3=excluded.x3, line=excluded.line, seq=excluded.seq")
                .c_str());
  }
  get_seq = std::make_unique<sql::Stmt>(db, "SELECT value FROM meta WHERE name='seq'");
  set_seq = std::make_unique<sql::Stmt>(db, "UPDATE meta SET value=? WHERE name='seq'");
  fn_by_key = std::make_unique<sql::Stmt>(
      db, "SELECT key, mangled, file, line, last_seen_ns FROM functions WHERE key=?");
  fn_by_mangled = std::make_unique<sql::Stmt>(
      db, "SELECT key, mangled, file, line, last_seen_ns FROM functions WHERE mangled=? LIMIT 1");
}

int64_t Store::Impl::currentSeq() {
  sql::Stmt& gs = *get_seq;
  gs.reset();
  const int64_t v = gs.step() ? gs.i64(0) : 0;
  gs.reset();
  return v;
}

Store::Impl::HotRow Store::Impl::stored(const AggKey& k) {
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

size_t Store::Impl::chunkOf(size_t left) {
  if (left >= kPgChunk) return kPgChunk;
  size_t c = 1;
  while (c * 2 <= left) c *= 2;
  return c;
}

sql::Stmt& Store::Impl::multi(Multi what, size_t rows) {
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
      q = "INSERT INTO functions(key, mangled, file, line, last_seen_ns, seq) VALUES " + tuples(6) +
          " ON CONFLICT(key) DO UPDATE SET " + schema::kFunctionMerge;
      break;
  }
  st = std::make_unique<sql::Stmt>(db, q.c_str());
  return *st;
}
// A row's value from its sketch, x1, x2, x3, line columns starting at `c`. A corrupt sketch

AggValue Store::Impl::storedValue(sql::Stmt& q, int c) {
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

int Store::Impl::bindKey(sql::Stmt& q, int p, const AggKey& k, const char& kind) {
  q.bindRef(p, k.key).bind(p + 1, k.bucket).bindRef(p + 2, std::string_view(&kind, 1));
  q.bindRef(p + 3, k.sub).bindRef(p + 4, k.service).bindRef(p + 5, k.version);
  q.bindRef(p + 6, k.env).bindRef(p + 7, k.origin);
  return p + 8;
}

std::vector<Store::Impl::HotRow> Store::Impl::storedMany(const std::vector<const AggKey*>& keys) {
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

void Store::Impl::upsertMany(const MergedRows& rows, int64_t seq) {
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

// PostgreSQL: the merge read and written in multi-row statements (see multi()).
void Store::Impl::writeAggregatesPostgres(const Batch& batch, WriteMode mode, int64_t seq,
                                          MergedRows& merged) {
  merged.reserve(batch.aggregates.size());
  std::vector<size_t> misses;
  for (const auto& [ingested, v] : batch.aggregates) {
    const AggKey& k = mode == WriteMode::kMerge ? own(ingested) : ingested;
    HotRow m;
    if (mode == WriteMode::kReplace) {
      cache.rows.erase(k);  // replaced rows are re-read when next merged into
      m.value = v;
    } else if (auto h = cache.rows.find(k); h != cache.rows.end()) {
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
    std::vector<HotRow> rows = storedMany(keys);
    for (size_t j = 0; j < misses.size(); ++j) merged[misses[j]].second = std::move(rows[j]);
  }
  if (mode == WriteMode::kMerge) {
    size_t i = 0;
    for (const auto& [ingested, v] : batch.aggregates) merged[i++].second.value.merge(v);
  }
  upsertMany(merged, seq);
  if (mode == WriteMode::kReplace) merged.clear();  // the cache holds ingest rows only
}

// SQLite: ingest merges each row against the cache (or the stored row) and writes it by primary
// key; a replace overwrites rows as they come.
void Store::Impl::writeAggregatesSqlite(const Batch& batch, WriteMode mode, int64_t seq,
                                        MergedRows& merged) {
  if (mode == WriteMode::kReplace) {
    sql::Stmt& up = *upsert_replace;
    for (const auto& [k, v] : batch.aggregates) {
      cache.rows.erase(k);  // replaced rows are re-read when next merged into
      const std::string blob = v.sketch.serialize();
      const char kind = static_cast<char>(k.kind);
      up.reset();
      bindKey(up, 1, k, kind);
      up.bindBlobRef(9, blob);
      up.bind(10, v.x1).bind(11, v.x2).bind(12, v.x3).bind(13, int64_t{v.line}).bind(14, seq);
      up.step();
    }
    up.reset();
    return;
  }
  merged.reserve(batch.aggregates.size());
  for (const auto& [ingested, v] : batch.aggregates) {
    const AggKey& k = own(ingested);
    HotRow m;
    if (auto h = cache.rows.find(k); h != cache.rows.end()) {
      m = h->second;
    } else {
      m = stored(k);
    }
    m.value.merge(v);
    const std::string blob = m.value.sketch.serialize();
    sql::Stmt& w = m.exists ? *update_row : *insert_row;
    const char kind = static_cast<char>(k.kind);
    w.rewind();
    bindKey(w, 1, k, kind);
    w.bindBlobRef(9, blob).bind(10, m.value.x1).bind(11, m.value.x2);
    w.bind(12, m.value.x3).bind(13, int64_t{m.value.line}).bind(14, seq);
    w.step();
    w.rewind();
    // A row gone behind the cache's back would silently drop this data: fail loudly.
    if (m.exists && db.changes() != 1) {
      cache.rows.clear();
      throw StoreError("store: cached row of " + k.key +
                       " vanished; was the store modified by another process?");
    }
    m.exists = true;
    merged.emplace_back(k, std::move(m));
  }
}

void Store::Impl::writeFunctions(const Batch& batch, int64_t seq) {
  if (sqlite) {
    sql::Stmt& fn = *upsert_fn;
    for (const auto& [key, info] : batch.functions) {
      fn.rewind();
      fn.bindRef(1, key).bindRef(2, info.mangled).bindRef(3, info.file);
      fn.bind(4, int64_t{info.line}).bind(5, info.last_seen_ns).bind(6, seq);
      fn.step();
    }
    fn.reset();
    return;
  }
  auto it = batch.functions.begin();
  for (size_t left = batch.functions.size(); left > 0;) {
    const size_t n = chunkOf(left);
    sql::Stmt& fn = multi(Multi::kUpsertFunctions, n);
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

store_detail::HostsWritten Store::Impl::writeHosts(const Batch& batch, int64_t seq) {
  sql::Stmt& hs = *upsert_host;
  store_detail::HostsWritten written;
  for (const auto& [kh, seen] : batch.hosts) {
    if (cache.hostIsFresh(kh, seen)) continue;
    hs.rewind();
    hs.bindRef(1, kh.first).bindRef(2, kh.second).bind(3, seen).bind(4, seq);
    hs.step();
    written.emplace_back(&kh, seen);
  }
  hs.reset();
  return written;
}

// The batch's bookkeeping values, and the sequence it was written with.
void Store::Impl::writeMeta(const Batch& batch, int64_t seq) {
  if (!batch.meta.empty()) {
    sql::Stmt m(db,
                "INSERT INTO meta(name, value) VALUES(?, ?) "
                "ON CONFLICT(name) DO UPDATE SET value=excluded.value");
    for (const auto& [name, value] : batch.meta) {
      if (name == "seq") throw StoreError("store: 'seq' is reserved");
      m.reset();
      m.bind(1, name).bind(2, value);
      m.step();
    }
  }
  sql::Stmt& ss = *set_seq;
  ss.reset();
  ss.bind(1, seq);
  ss.step();
  ss.reset();
}

}  // namespace perfhat::handler
