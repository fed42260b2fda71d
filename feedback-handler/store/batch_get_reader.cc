#include "feedback-handler/store/batch_get_reader.h"

#include <algorithm>
#include <charconv>
#include <numeric>

#include <nlohmann/json.hpp>

#include "common/callees_key.h"
#include "common/function_key.h"
#include "feedback-handler/store/caller_callees.h"
#include "feedback-handler/util/rfc3339.h"

namespace perfhat::handler {
namespace {

using store_detail::Acc;
using store_detail::KeyAcc;
using store_detail::roundCount;
using store_detail::storedCount;
using store_detail::storedSum;
using store_detail::toStats;
using store_detail::wholeNs;

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

void readInfo(sql::Stmt& q, int c, FeedbackItem& item) {
  item.key = q.text(c);
  item.mangled = q.text(c + 1);
  item.file = q.text(c + 2);
  item.line = static_cast<int>(q.i64(c + 3));
  item.last_seen = formatRfc3339(q.i64(c + 4));
}

bool lookup(sql::Stmt& q, const std::string& k, FeedbackItem& item) {
  q.reset();
  q.bind(1, k);
  const bool found = q.step();
  if (found) readInfo(q, 0, item);
  q.reset();
  return found;
}

}  // namespace

BatchGetReader::BatchGetReader(const StoreOptions& options, const BatchGetRequest& request,
                               ChunkTeam* team)
    : options_(options), request_(request), team_(team) {
  const int64_t now = options_.now_ns();
  cur_ = store_detail::resolveWindow(request.range, now, options_.default_range_minutes);
  if (request.baseline) {
    base_ = store_detail::resolveWindow(request.baseline, now, options_.default_range_minutes);
  }
  lo_ = base_ ? std::min(cur_.first_bucket(), base_->first_bucket()) : cur_.first_bucket();
  hi_ = base_ ? std::max(cur_.last_bucket(), base_->last_bucket()) : cur_.last_bucket();
  cur_text_ = TimeWindow{formatRfc3339(cur_.from_ns), formatRfc3339(cur_.to_ns)};
  if (base_) base_text_ = TimeWindow{formatRfc3339(base_->from_ns), formatRfc3339(base_->to_ns)};
}

BatchGetResponse BatchGetReader::read(Store::Impl& store) {
  im_ = &store;
  sql::Transaction snapshot(im_->db, /*write=*/false);  // one consistent read, one lock
  BatchGetResponse out;
  {
    sql::Stmt& gs = *im_->get_seq;
    gs.reset();
    if (gs.step()) out.cursor = std::to_string(gs.i64(0));
    gs.reset();
  }
  n_ = request_.keys.size();
  item_of_.assign(n_, kNone);
  by_key_.reserve(n_);
  // Large requests are read in chunks on parallel connections: this one, then readers opened
  // here, before any thread uses them.
  dbs_ = {&im_->db};
  if (!team_ && chunkCount(n_, Store::Impl::kKeysPerChunk, im_->read_threads) > 1) {
    team_ = &own_team_.emplace(im_->read_threads);
  }
  resolveExactKeys();
  resolveByName();
  stored_keys_.reserve(items_.size());
  for (const FeedbackItem& it : items_) stored_keys_.push_back(it.key);
  readRows();
  rateCallSites();
  addDroppedCalls();
  addExposure(out);
  snapshot.commit();
  return inRequestOrder(std::move(out));
}

// Request position `i` asks for a key already resolved to an item.
bool BatchGetReader::known(size_t i, std::string_view stored_key) {
  auto it = by_key_.find(stored_key);
  if (it == by_key_.end()) return false;
  item_of_[i] = it->second;
  first_request_[it->second] = std::min(first_request_[it->second], i);
  return true;
}

// The last item of `items_` answers request position `i`.
void BatchGetReader::adopt(size_t i) {
  item_of_[i] = static_cast<uint32_t>(items_.size() - 1);
  first_request_.push_back(i);
  by_key_.emplace(items_.back().key, item_of_[i]);
}

// Opens the read connections `count` items need; returns how many chunks they are read in.
size_t BatchGetReader::chunksFor(size_t count) {
  const size_t chunks = chunkCount(count, Store::Impl::kKeysPerChunk, im_->read_threads);
  while (dbs_.size() < chunks) dbs_.push_back(&im_->reader(dbs_.size() - 1, options_.path));
  return chunks;
}

// fn(chunk, db, begin, end) over the chunks, each in a read transaction of its own connection
// (all of the same snapshot: the store's lock is held, so no write commits between them).
template <typename Fn>
void BatchGetReader::inChunks(size_t count, size_t chunks, Fn&& fn) {
  forEachChunk(team_, count, chunks, [&](size_t c, size_t begin, size_t end) {
    if (c == 0) return fn(c, im_->db, begin, end);
    sql::Transaction same_snapshot(*dbs_[c], /*write=*/false);
    fn(c, *dbs_[c], begin, end);
    same_snapshot.commit();
  });
}

// Step 1a: exact keys, one statement per chunk; each found key's item goes to the slot of its
// request position. One item per stored key, even if asked twice (answered at its first request
// position).
void BatchGetReader::resolveExactKeys() {
  std::vector<FeedbackItem> slots(n_);
  std::vector<char> hit(n_, 0);
  inChunks(n_, chunksFor(n_), [&](size_t, sql::Db& db, size_t begin, size_t end) {
    sql::Stmt q(db, ("SELECT j.key, f.key, f.mangled, f.file, f.line, f.last_seen_ns FROM " +
                     sql::jsonEach(db.backend(), 1) + " j JOIN functions f ON f.key = j.value")
                        .c_str());
    const std::string arr = jsonStringArray(
        std::vector<std::string_view>(request_.keys.begin() + static_cast<ptrdiff_t>(begin),
                                      request_.keys.begin() + static_cast<ptrdiff_t>(end)));
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
  for (size_t i = 0; dense && i < n_; ++i) dense = by_key_.emplace(slots[i].key, i).second;
  if (dense) {
    items_ = std::move(slots);  // the elements stay where they are, so by_key_'s views hold
    std::iota(item_of_.begin(), item_of_.end(), 0);
    first_request_.resize(n_);
    std::iota(first_request_.begin(), first_request_.end(), 0);
    return;
  }
  by_key_.clear();
  items_.reserve(n_);  // never reallocates from here on
  for (size_t i = 0; i < n_; ++i) {
    if (!hit[i] || known(i, slots[i].key)) continue;
    items_.push_back(std::move(slots[i]));
    adopt(i);
  }
}

// Step 1b: the rest by mangled name, normalized spelling, qualified name (data recorded with
// code.function.name only has no parameter list).
void BatchGetReader::resolveByName() {
  std::vector<std::pair<size_t, std::string>> named;  // request position, stored key
  auto calleesKey = [&](size_t i) {
    const std::string& k = request_.keys[i];
    return k.rfind(kCalleesKeyPrefix, 0) == 0
               ? normalizeFunctionKey(std::string_view(k).substr(kCalleesKeyPrefix.size()))
               : std::string();
  };
  std::vector<std::string> callers;
  for (size_t i = 0; i < n_; ++i)
    if (item_of_[i] == kNone)
      if (std::string c = calleesKey(i); !c.empty()) callers.push_back(std::move(c));
  const auto callees = storedCalleesOf(im_->db, callers, lo_, hi_);
  for (size_t i = 0; i < n_; ++i) {
    if (item_of_[i] != kNone) continue;
    const std::string& requested = request_.keys[i];
    if (requested.rfind(kCalleesKeyPrefix, 0) == 0) {
      // Every function production ran from a caller (a call through a function pointer).
      if (auto it = callees.find(calleesKey(i)); it != callees.end())
        for (const std::string& k : it->second) named.emplace_back(i, k);
      continue;
    }
    if (requested.rfind(kVirtualKeyPrefix, 0) == 0) {
      // Every implementation of a virtual function (the analysis keeps those called from the
      // call's own function, by their call-site data).
      const std::string m = memberSignature(
          normalizeFunctionKey(std::string_view(requested).substr(kVirtualKeyPrefix.size())));
      if (const std::vector<std::string>* keys =
              m.empty() ? nullptr : im_->names.find(im_->db, m, KeyNameIndex::By::kMemberSignature))
        for (const std::string& k : *keys) named.emplace_back(i, k);
      continue;
    }
    FeedbackItem item;
    bool found = lookup(*im_->fn_by_mangled, requested, item);
    std::string name;
    if (!found) {
      const std::string norm = normalizeFunctionKey(requested);
      name = qualifiedName(norm);
      found = lookup(*im_->fn_by_key, norm, item) || lookup(*im_->fn_by_key, name, item);
    }
    if (!found && !name.empty()) {
      // Instantiations of a template, other overloads of a name: every stored key of the name,
      // appended below (`by_key_` views the keys of `items_` in place: it must not reallocate).
      if (const std::vector<std::string>* keys =
              im_->names.find(im_->db, name, KeyNameIndex::By::kQualifiedName))
        for (const std::string& k : *keys) named.emplace_back(i, k);
      continue;
    }
    if (!found || known(i, item.key)) continue;
    items_.push_back(std::move(item));
    adopt(i);
  }
  extra_.assign(items_.size(), 0);  // items no request position answers (inRequestOrder)
  // by_key_ views the keys of items_ in place, and items_ grows below: copy what it holds first.
  std::unordered_map<std::string, uint32_t> added;
  for (const auto& [k, idx] : by_key_) added.emplace(std::string(k), idx);
  by_key_.clear();
  for (const auto& [i, k] : named) {
    uint32_t at;
    if (auto it = added.find(k); it != added.end()) {
      at = it->second;
    } else {
      FeedbackItem item;
      if (!lookup(*im_->fn_by_key, k, item)) continue;
      at = static_cast<uint32_t>(items_.size());
      items_.push_back(std::move(item));
      first_request_.push_back(i);
      extra_.push_back(1);
      added.emplace(k, at);
    }
    if (item_of_[i] == kNone) {
      item_of_[i] = at;
      first_request_[at] = extra_[at] ? i : std::min(first_request_[at], i);
      extra_[at] = 0;
    }
  }
}

// Step 2: every aggregate row of the items' keys in the windows, accumulated per key, and their
// hosts: a statement each per chunk of keys, chunks read in parallel. Per call site, its raw
// count and x1 wait for the caller totals of step 3.
void BatchGetReader::readRows() {
  has_data_.assign(items_.size(), 0);
  done_.assign(items_.size(), 0);
  const size_t chunks = chunksFor(items_.size());
  std::vector<std::vector<CallerFix>> chunk_fixes(chunks);
  inChunks(items_.size(), chunks, [&](size_t c, sql::Db& db, size_t begin, size_t end) {
    readChunk(db, begin, end, chunk_fixes[c]);
  });
  for (size_t c = 0; c < chunks; ++c) {
    fixes_.insert(fixes_.end(), chunk_fixes[c].begin(), chunk_fixes[c].end());
  }
}

// Reads the aggregates and hosts of items [begin, end) through `db` into those items; call sites
// go to `fixes`. Touches no state outside its items, so chunks run concurrently.
//
// The aggregate rows of one key arrive together (SQLite walks the keys in array order, then the
// primary-key index of each), so they are accumulated in one reused KeyAcc and turned into the
// item as soon as the next key starts: no per-item maps, no intermediate sketches. Should rows
// ever arrive interleaved (another plan, another backend), the statement is run again with an
// ORDER BY that groups them.
void BatchGetReader::readChunk(sql::Db& db, size_t begin, size_t end,
                               std::vector<CallerFix>& fixes) {
  std::vector<std::string_view> chunk_keys(stored_keys_.begin() + static_cast<ptrdiff_t>(begin),
                                           stored_keys_.begin() + static_cast<ptrdiff_t>(end));
  const std::string chunk_arr = jsonStringArray(chunk_keys);
  KeyAcc acc;
  // PostgreSQL may return a join in any order; SQLite's nested loop keeps keys together.
  if (!readAggregates(db, begin, end, chunk_arr, /*ordered=*/!im_->sqlite, acc, fixes)) {
    acc.clear();
    fixes.clear();
    forgetChunk(begin, end);
    readAggregates(db, begin, end, chunk_arr, /*ordered=*/true, acc, fixes);
  }
  sql::Stmt h(db, ("SELECT j.key, h.host FROM " + sql::jsonEach(db.backend(), 1) +
                   " j JOIN hosts h ON h.key = j.value ORDER BY j.key, h.host")
                      .c_str());
  h.bindRef(1, chunk_arr);
  while (h.step()) {
    const auto idx = begin + static_cast<size_t>(h.i64(0));
    if (idx < end) items_[idx].hosts.push_back(h.text(1));
  }
}

// Returns false when a key's rows were not contiguous (nothing of the run is kept then).
bool BatchGetReader::readAggregates(sql::Db& db, size_t begin, size_t end, const std::string& keys,
                                    bool ordered, KeyAcc& acc, std::vector<CallerFix>& fixes) {
  sql::Stmt q(db,
              ("SELECT j.key, a.kind, a.sub, a.bucket, a.service, a.version, a.sketch, a.x1, a.x2, "
               "a.x3, a.line FROM " +
               sql::jsonEach(db.backend(), 1) +
               " j JOIN aggregates a ON a.key = j.value "
               "AND a.bucket >= ?2 AND a.bucket <= ?3" +
               (ordered ? " ORDER BY j.key, a.bucket, a.kind, a.sub, a.service, a.version, a.env, "
                          "a.origin"
                        : ""))
                  .c_str());
  q.bindRef(1, keys).bind(2, lo_).bind(3, hi_);
  size_t current = SIZE_MAX;
  while (q.step()) {
    const auto idx = begin + static_cast<size_t>(q.i64(0));
    if (idx >= end) continue;
    if (idx != current) {
      if (current != SIZE_MAX) finishItem(current, acc, fixes);
      if (done_[idx]) return false;
      current = idx;
    }
    const int64_t bucket = q.i64(3);
    const bool in_cur = cur_.contains(bucket);
    const bool in_base = base_ && base_->contains(bucket);
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
        // An ordinal as written by ingest; anything else (from an upstream) reads as 0 instead
        // of overflowing atoi.
        const std::string_view ord = q.blob(2);
        int ordinal = 0;
        std::from_chars(ord.data(), ord.data() + ord.size(), ordinal);
        acc.loop(ordinal).add(sketch, 0, 0, 0, static_cast<int>(q.i64(10)), bucket);
      } else if (kind == "s") {
        acc.sizes.add(sketch, 0, 0, 0, 0, bucket);
      } else if (kind == "e") {
        acc.sampled_calls += storedCount(q.f64(7));
        acc.sampled_records += storedCount(q.f64(8));
      }
    } catch (const DDSketchError&) {
    }
  }
  if (current != SIZE_MAX) finishItem(current, acc, fixes);
  return true;
}

// Turns the rows accumulated for item `idx` into its statistics and clears `acc` for the next.
void BatchGetReader::finishItem(size_t idx, KeyAcc& acc, std::vector<CallerFix>& fixes) {
  done_[idx] = 1;
  FeedbackItem& item = items_[idx];
  if (!acc.fn_cur.sketch.empty()) item.stats = toStats(acc.fn_cur, cur_, cur_text_);
  if (item.stats && acc.sampled_calls > 0) {
    item.sampled_calls = acc.sampled_calls;
    item.sampled_records = acc.sampled_records;
  }
  if (base_ && !acc.fn_base.sketch.empty()) {
    item.baseline = toStats(acc.fn_base, *base_, base_text_);
  }
  // Callers by name, then by count (the order of a std::map and then the same std::sort as
  // before: equal counts keep the same, deterministic order).
  std::vector<uint32_t>& order = acc.order;
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
    fixes.push_back({static_cast<uint32_t>(idx), static_cast<uint32_t>(item.callsites.size() - 1),
                     a.sketch.count(), a.x1});
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
  has_data_[idx] = !acc.fn_cur.sketch.empty() || loops > 0 || !acc.sizes.sketch.empty();
  acc.clear();
}

// Drops what a chunk's first, interleaved read put into its items before the ordered re-read.
void BatchGetReader::forgetChunk(size_t begin, size_t end) {
  std::fill(done_.begin() + static_cast<ptrdiff_t>(begin),
            done_.begin() + static_cast<ptrdiff_t>(end), 0);
  std::fill(has_data_.begin() + static_cast<ptrdiff_t>(begin),
            has_data_.begin() + static_cast<ptrdiff_t>(end), 0);
  for (size_t i = begin; i < end; ++i) {
    FeedbackItem& item = items_[i];
    item.stats.reset();
    item.baseline.reset();
    item.callsites.clear();
    item.loops.clear();
    item.result_size.reset();
    item.versions.clear();
    item.services.clear();
  }
}

// Step 3: function totals of every caller in the current window, for rates per caller.
void BatchGetReader::rateCallSites() {
  std::unordered_map<std::string, Acc> caller_totals;
  std::vector<std::string_view> callers;
  for (const CallerFix& f : fixes_) {
    const std::string& caller = items_[f.item].callsites[f.callsite].caller;
    if (auto [it, fresh] = caller_totals.try_emplace(caller); fresh) callers.push_back(it->first);
  }
  if (!callers.empty()) {
    sql::Stmt q(im_->db,
                ("SELECT j.value, a.sketch, a.bucket FROM " + sql::jsonEach(im_->db.backend(), 1) +
                 " j JOIN aggregates a "
                 "ON a.key = j.value AND a.bucket >= ?2 AND a.bucket <= ?3 AND a.kind = 'f'")
                    .c_str());
    const std::string arr = jsonStringArray(callers);
    q.bindRef(1, arr).bind(2, cur_.first_bucket()).bind(3, cur_.last_bucket());
    while (q.step()) {
      auto it = caller_totals.find(q.text(0));
      if (it == caller_totals.end()) continue;
      try {
        it->second.add(q.blob(1), 0, 0, 0, 0, q.i64(2));
      } catch (const DDSketchError&) {
      }
    }
  }
  for (const CallerFix& f : fixes_) {
    CallSiteStats& cs = items_[f.item].callsites[f.callsite];
    const Acc& ct = caller_totals[cs.caller];
    if (!ct.sketch.empty()) {
      cs.caller_rate_per_s = ct.sketch.count() / ct.seconds(cur_);
      cs.calls_per_parent = f.count / ct.sketch.count();
    } else if (f.x1 > 0) {
      cs.calls_per_parent = f.count / f.x1;
    }
  }
}

// Step 4: calls each service's exporters reported lost in the window (AggKind::kDropped): the
// counts of that service's functions are low by up to that much, so readers show it there.
void BatchGetReader::addDroppedCalls() {
  std::unordered_map<std::string, double> lost;
  sql::Stmt q(im_->db,
              "SELECT service, SUM(x1) FROM aggregates WHERE key = '' AND bucket >= ?1 AND "
              "bucket <= ?2 AND kind = 'd' GROUP BY service");
  q.bind(1, cur_.first_bucket()).bind(2, cur_.last_bucket());
  while (q.step()) lost[q.text(0)] += q.f64(1);
  for (size_t i = 0; !lost.empty() && i < items_.size(); ++i) {
    for (const std::string& service : items_[i].services) {
      if (auto it = lost.find(service); it != lost.end()) items_[i].dropped_calls += it->second;
    }
  }
}

// Step 5: items in request order; keys without data in the window are missing. Usually every
// key was found by the first statement, in request order, once, with data: then `items_` is the
// answer as it is (moving 10,000 items one by one into a fresh vector cost ~5 % of a call).
BatchGetResponse BatchGetReader::inRequestOrder(BatchGetResponse out) {
  bool as_is = items_.size() == n_;
  for (size_t i = 0; as_is && i < n_; ++i) as_is = item_of_[i] == i && has_data_[i];
  if (as_is) {
    out.items = std::move(items_);
    return out;
  }
  out.items.reserve(items_.size());
  for (size_t i = 0; i < n_; ++i) {
    const uint32_t idx = item_of_[i];
    if (idx != kNone && first_request_[idx] != i) continue;  // a repeat of a key already answered
    if (idx == kNone || !has_data_[idx]) {
      out.missing.push_back(request_.keys[i]);
    } else {
      out.items.push_back(std::move(items_[idx]));
    }
  }
  for (size_t idx = 0; idx < extra_.size(); ++idx)
    if (extra_[idx] && has_data_[idx]) out.items.push_back(std::move(items_[idx]));
  return out;
}

}  // namespace perfhat::handler
