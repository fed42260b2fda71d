#include "server/index/workspace_index.h"

#include <algorithm>
#include <bit>
#include <deque>
#include <iterator>
#include <optional>
#include <unordered_set>

#include "server/index/changed_keys.h"
#include "server/index/summary_codec.h"

namespace perfhat::index {

using analysis::FunctionInfo;
using analysis::NodeKind;

namespace {

// Every position the summary holds (summary_codec.cc), lines counted from the function's first
// line: two functions with the same layout differ in their summaries' positions by whole lines.
uint64_t layoutOf(const FunctionInfo& f) {
  // A word at a time (splitmix64's finaliser per word): byte-wise FNV over every node of a large
  // file cost as much as the encoding it saves.
  uint64_t h = 0x9e3779b97f4a7c15ULL;
  auto mix = [&h](int64_t v) {
    uint64_t z = h ^ static_cast<uint64_t>(v);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    h = z ^ (z >> 31);
  };
  const int base = f.range.start.line;
  auto pos = [&](const analysis::Position& p) {
    mix((static_cast<int64_t>(p.line - base) << 32) ^ static_cast<uint32_t>(p.column));
  };
  auto range = [&](const analysis::Range& r) {
    pos(r.start);
    pos(r.end);
  };
  range(f.range);
  range(f.name_range);
  // Keys are long (qualified names with parameters): the library's string hash, then one mix.
  auto text = [&](const std::string& t) {
    mix(t.empty() ? 0 : static_cast<int64_t>(std::hash<std::string_view>{}(t)));
  };
  // What declarations outside the body decide (same tokens, other meaning): which function a
  // call resolves to and what it is, a named constant's trip count, a branch's static prior.
  mix(f.unresolved_calls);
  for (const auto& n : f.nodes) {
    range(n.range);
    pos(n.hint);
    text(n.call.key);
    mix((n.call.in_workspace ? 1 : 0) | (n.call.system ? 2 : 0) | (n.call.is_virtual ? 4 : 0) |
        (n.call.indirect ? 8 : 0));
    text(n.loop.producer_key);
    mix(n.loop.constant_trip ? std::bit_cast<int64_t>(*n.loop.constant_trip) : -1);
    mix(n.branch.prior ? std::bit_cast<int64_t>(*n.branch.prior) : -1);
  }
  return h;
}

void moveLines(FunctionInfo& f, int d) {
  auto range = [d](analysis::Range& r) {
    r.start.line += d;
    r.end.line += d;
  };
  range(f.range);
  range(f.name_range);
  for (auto& n : f.nodes) {
    range(n.range);
    n.hint.line += d;
  }
}

}  // namespace

std::optional<FunctionInfo> WorkspaceIndex::decode(const Stored& st) {
  std::optional<FunctionInfo> f = decodeSummary(st.summary);
  if (f && st.moved_lines != 0) moveLines(*f, st.moved_lines);
  return f;
}

WorkspaceIndex::StoredPtr WorkspaceIndex::store(const FunctionInfo& f) {
  auto st = std::make_shared<Stored>();
  st->key = f.key;
  st->file = f.file;
  st->body_hash = f.body_hash;
  st->range = f.range;
  st->layout = layoutOf(f);
  st->summary = encodeSummary(f);
  for (const auto& n : f.nodes)
    if (n.kind == NodeKind::Call && !n.call.key.empty()) st->callees.push_back(n.call.key);
  std::sort(st->callees.begin(), st->callees.end());
  st->callees.erase(std::unique(st->callees.begin(), st->callees.end()), st->callees.end());
  st->summary.shrink_to_fit();
  return st;
}

std::vector<WorkspaceIndex::StoredPtr> WorkspaceIndex::storeAll(
    const std::vector<FunctionInfo>& functions) {
  std::vector<StoredPtr> out;
  out.reserve(functions.size());
  for (const auto& f : functions)
    if (!f.key.empty() && !f.nodes.empty()) out.push_back(store(f));
  return out;
}

const std::vector<WorkspaceIndex::StoredPtr>* WorkspaceIndex::effective(
    const std::string& file) const {
  if (auto it = open_.find(file); it != open_.end()) return &it->second;
  if (auto it = indexed_.find(file); it != indexed_.end()) return &it->second;
  return nullptr;
}

namespace {

// The sorted, distinct callees of the functions of one key in one file's list (a key can come
// twice: two block-scope classes of the same name in one function, as each EXPECT_FATAL_FAILURE
// in a googletest test defines).
struct CalleesOfKey {
  const std::vector<std::string>* only = nullptr;
  std::vector<std::string> merged;
  const std::vector<std::string>& get() const { return only ? *only : merged; }
  void add(const std::vector<std::string>& callees, bool first) {
    if (first) {
      only = &callees;
      return;
    }
    std::vector<std::string> all;
    std::set_union(get().begin(), get().end(), callees.begin(), callees.end(),
                   std::back_inserter(all));
    merged = std::move(all);
    only = nullptr;
  }
};

}  // namespace

void WorkspaceIndex::relink(const std::string& file, const std::vector<StoredPtr>* before,
                            const std::vector<StoredPtr>* after) {
  static const std::vector<StoredPtr> kNone;
  const std::vector<StoredPtr>& old = before ? *before : kNone;
  const std::vector<StoredPtr>& now = after ? *after : kNone;
  const bool in_place = std::equal(old.begin(), old.end(), now.begin(), now.end(),
                                   [](const StoredPtr& o, const StoredPtr& n) {
                                     return o->key == n->key && o->file == n->file;
                                   });
  if (in_place) {
    relinkInPlace(old, now);
    return;
  }
  // callers_ and the files per key: only the (callee, caller) pairs the old text had and the new
  // one has not, and back; an edit leaves almost every function calling what it called.
  auto byKey = [](const std::vector<StoredPtr>& fns) {
    std::unordered_map<std::string_view, CalleesOfKey> out;
    out.reserve(fns.size());
    for (const StoredPtr& f : fns) {
      auto [it, first] = out.try_emplace(f->key);
      it->second.add(f->callees, first);
    }
    return out;
  };
  const auto old_keys = byKey(old);
  const auto new_keys = byKey(now);
  // by_key_ as unlinking every old function and linking every new one would leave it: a key
  // whose body was the old one's takes the first new body of that key; a body from the file
  // itself beats one another TU saw in a header (same key, same code, and the file's own copy is
  // the one its edits update). Marked empty instead of erased, so that a key the new text keeps
  // is not erased and inserted again.
  for (const StoredPtr& f : old) {
    auto it = by_key_.find(f->key);
    if (it != by_key_.end() && it->second.fn == f) it->second.fn = nullptr;
  }
  for (const StoredPtr& f : now) {
    KeyEntry& e = by_key_[f->key];
    if (!e.fn || f->file == file) e.fn = f;
  }
  for (const auto& [key, callees] : new_keys)
    if (!old_keys.count(key)) ++by_key_.find(std::string(key))->second.files;
  bool orphaned = false;
  for (const auto& [key, callees] : old_keys) {
    if (new_keys.count(key)) continue;
    auto it = by_key_.find(std::string(key));
    if (it == by_key_.end()) continue;
    if (--it->second.files <= 0)
      by_key_.erase(it);
    else if (!it->second.fn)
      orphaned = true;
  }
  if (orphaned) adoptFromOtherFiles(file);
  static const std::vector<std::string> kNoCallees;
  for (const auto& [key, callees] : new_keys) {
    auto o = old_keys.find(key);
    const std::vector<std::string>& had = o == old_keys.end() ? kNoCallees : o->second.get();
    const std::vector<std::string>& has = callees.get();
    if (had == has) continue;
    std::vector<std::string> gone, added;
    std::set_difference(had.begin(), had.end(), has.begin(), has.end(), std::back_inserter(gone));
    std::set_difference(has.begin(), has.end(), had.begin(), had.end(), std::back_inserter(added));
    for (const auto& callee : gone) unlinkCaller(callee, key);
    for (const auto& callee : added) linkCaller(callee, key);
  }
  for (const auto& [key, callees] : old_keys)
    if (!new_keys.count(key))
      for (const auto& callee : callees.get()) unlinkCaller(callee, key);
}

void WorkspaceIndex::adoptFromOtherFiles(const std::string& file) {
  // One pass over the other files' lists, made only when such a key exists (a header's inline
  // function given up by one of the files that see it).
  std::vector<const std::vector<StoredPtr>*> others;
  for (const auto& [other, fns] : open_)
    if (other != file) others.push_back(&fns);
  for (const auto& [other, fns] : indexed_)
    if (other != file && !open_.count(other)) others.push_back(&fns);
  for (const auto* fns : others)
    for (const StoredPtr& f : *fns)
      if (auto it = by_key_.find(f->key); it != by_key_.end() && !it->second.fn) it->second.fn = f;
  for (auto it = by_key_.begin(); it != by_key_.end();)
    it = it->second.fn ? std::next(it) : by_key_.erase(it);  // no provider found after all
}

void WorkspaceIndex::relinkInPlace(const std::vector<StoredPtr>& old,
                                   const std::vector<StoredPtr>& now) {
  // The same keys from the same files in the same order: by_key_ holds the same place's
  // function of each key before and after, and only the calls of the functions that changed
  // can change callers_.
  std::vector<std::string_view> calls_changed;
  for (size_t i = 0; i < old.size(); ++i) {
    if (old[i] == now[i]) continue;
    if (auto it = by_key_.find(now[i]->key); it != by_key_.end() && it->second.fn == old[i])
      it->second.fn = now[i];
    if (old[i]->callees != now[i]->callees &&
        std::find(calls_changed.begin(), calls_changed.end(), now[i]->key) == calls_changed.end())
      calls_changed.push_back(now[i]->key);
  }
  for (std::string_view key : calls_changed) {
    // Every function of the key counts (a key can have several).
    auto calleesOf = [key](const std::vector<StoredPtr>& fns) {
      std::set<std::string_view> out;
      for (const auto& f : fns)
        if (f->key == key) out.insert(f->callees.begin(), f->callees.end());
      return out;
    };
    const auto had = calleesOf(old);
    const auto has = calleesOf(now);
    for (std::string_view callee : had)
      if (!has.count(callee)) unlinkCaller(std::string(callee), key);
    for (std::string_view callee : has)
      if (!had.count(callee)) linkCaller(std::string(callee), key);
  }
}

void WorkspaceIndex::linkCaller(const std::string& callee, std::string_view caller) {
  ++callers_[callee][std::string(caller)];
}

void WorkspaceIndex::unlinkCaller(const std::string& callee, std::string_view caller) {
  auto c = callers_.find(callee);
  if (c == callers_.end()) return;
  if (auto it = c->second.find(caller); it != c->second.end() && --it->second <= 0)
    c->second.erase(it);
  if (c->second.empty()) callers_.erase(c);
}

void WorkspaceIndex::setIndexed(const std::string& file, std::vector<FunctionInfo> functions) {
  std::vector<StoredPtr> stored = storeAll(functions);  // encoded outside the lock
  MutexLock lock(mu_);
  // An open document's text stands for the file until it is closed.
  if (!open_.count(file)) relink(file, effective(file), &stored);
  indexed_[file] = std::move(stored);
}

WorkspaceIndex::StoredPtr WorkspaceIndex::reuse(const StoredPtr& previous, const FunctionInfo& f,
                                                std::optional<uint64_t>& layout) {
  // The same tokens with the same layout and resolution: the same summary, decoded at the lines
  // the function moved by. (The tokens alone would keep a re-indented body's old columns, or a
  // call's old callee after a declaration above it changed.)
  if (previous->body_hash != f.body_hash) return nullptr;
  if (!layout) layout = layoutOf(f);
  if (previous->layout != *layout) return nullptr;
  if (previous->range == f.range) return previous;
  auto moved = std::make_shared<Stored>(*previous);
  moved->moved_lines += f.range.start.line - previous->range.start.line;
  moved->range = f.range;
  return moved;
}

std::vector<std::string> WorkspaceIndex::setOpen(const std::string& file,
                                                 const std::vector<FunctionInfo>& functions) {
  // Functions whose body is unchanged keep their encoded summary, wherever the edit moved them:
  // an edit re-encodes only what it touched. The list is copied (pointers) so that what follows
  // runs outside the lock.
  std::vector<StoredPtr> before_fns;
  bool was_open = false;
  {
    MutexLock lock(mu_);
    if (const auto* fns = effective(file)) before_fns = *fns;
    was_open = open_.count(file) > 0;
  }
  static const std::vector<StoredPtr> kNone;
  const std::vector<StoredPtr>& previous_fns = was_open ? before_fns : kNone;
  std::vector<const FunctionInfo*> valid;
  valid.reserve(functions.size());
  for (const auto& f : functions)
    if (!f.key.empty() && !f.nodes.empty()) valid.push_back(&f);
  std::vector<StoredPtr> stored;
  stored.reserve(valid.size());
  // The usual edit keeps every function, in order: each is matched with the one in its place.
  const bool in_place =
      was_open &&
      std::equal(valid.begin(), valid.end(), previous_fns.begin(), previous_fns.end(),
                 [](const FunctionInfo* f, const StoredPtr& p) { return f->key == p->key; });
  if (in_place) {
    // A function that is not the one in its place may be another of its key that moved (two
    // functions of one key swapped): those left over are matched by key among themselves.
    std::vector<size_t> unmatched;
    std::vector<std::optional<uint64_t>> layouts(valid.size());
    for (size_t i = 0; i < valid.size(); ++i) {
      stored.push_back(reuse(previous_fns[i], *valid[i], layouts[i]));
      if (!stored.back()) unmatched.push_back(i);
    }
    if (unmatched.size() > 1) {
      std::unordered_map<std::string_view, std::vector<size_t>> free_of_key;
      for (size_t i : unmatched) free_of_key[previous_fns[i]->key].push_back(i);
      for (size_t i : unmatched) {
        std::vector<size_t>& free = free_of_key[valid[i]->key];
        for (auto c = free.begin(); c != free.end(); ++c)
          if (*c != i && (stored[i] = reuse(previous_fns[*c], *valid[i], layouts[i]))) {
            free.erase(c);
            break;
          }
      }
    }
    for (size_t i : unmatched)
      if (!stored[i]) stored[i] = store(*valid[i]);
  } else {
    // Several functions can share a key (block-scope classes of the same name in one
    // function): each is matched to a previous one of its key with the same body and layout.
    std::unordered_map<std::string_view, std::vector<const StoredPtr*>> previous;
    previous.reserve(previous_fns.size());
    for (const auto& f : previous_fns) previous[f->key].push_back(&f);
    for (const FunctionInfo* f : valid) {
      StoredPtr same;
      if (auto it = previous.find(f->key); it != previous.end()) {
        std::optional<uint64_t> layout;
        for (auto c = it->second.begin(); c != it->second.end(); ++c)
          if ((same = reuse(**c, *f, layout))) {
            it->second.erase(c);
            break;
          }
      }
      stored.push_back(same ? std::move(same) : store(*f));
    }
  }
  std::vector<std::string> changed;
  if (in_place) {
    // A key whose body differs in some place changed unless its bodies in those places are
    // the same as a set (functions of one key that swapped places); the other places are equal.
    std::vector<std::string_view> order;
    std::unordered_map<std::string_view, std::pair<std::vector<uint64_t>, std::vector<uint64_t>>>
        differing;
    for (size_t i = 0; i < stored.size(); ++i) {
      if (stored[i]->body_hash == previous_fns[i]->body_hash) continue;
      auto [it, first] = differing.try_emplace(stored[i]->key);
      if (first) order.push_back(stored[i]->key);
      it->second.first.push_back(previous_fns[i]->body_hash);
      it->second.second.push_back(stored[i]->body_hash);
    }
    for (std::string_view key : order) {
      auto& [had, has] = differing[key];
      std::sort(had.begin(), had.end());
      std::sort(has.begin(), has.end());
      if (had != has) changed.emplace_back(key);
    }
  } else {
    changed = changedKeys(before_fns, stored, [](const StoredPtr& f) {
      return std::pair<std::string_view, uint64_t>(f->key, f->body_hash);
    });
  }
  MutexLock lock(mu_);
  relink(file, effective(file), &stored);
  open_[file] = std::move(stored);
  return changed;
}

void WorkspaceIndex::closeOpen(const std::string& file) {
  MutexLock lock(mu_);
  auto it = open_.find(file);
  if (it == open_.end()) return;
  auto indexed = indexed_.find(file);
  relink(file, &it->second, indexed == indexed_.end() ? nullptr : &indexed->second);
  open_.erase(it);
}

FunctionPtr WorkspaceIndex::find(const std::string& key) const {
  StoredPtr st;
  {
    MutexLock lock(mu_);
    auto it = by_key_.find(key);
    if (it == by_key_.end()) return nullptr;
    st = it->second.fn;
  }
  std::optional<FunctionInfo> f = decode(*st);
  return f ? std::make_shared<const FunctionInfo>(std::move(*f)) : nullptr;
}

std::vector<Caller> WorkspaceIndex::callersOf(const std::string& key) const {
  std::vector<StoredPtr> stored;
  {
    MutexLock lock(mu_);
    auto it = callers_.find(key);
    if (it == callers_.end()) return {};
    for (const auto& [caller, files] : it->second)
      if (auto f = by_key_.find(caller); f != by_key_.end()) stored.push_back(f->second.fn);
  }
  std::vector<Caller> out;
  for (const auto& st : stored) {
    std::optional<FunctionInfo> f = decode(*st);
    if (!f) continue;
    Caller c{std::make_shared<const FunctionInfo>(std::move(*f)), {}};
    for (const auto& n : c.function->nodes)
      if (n.kind == NodeKind::Call && n.call.key == key) c.call_nodes.push_back(n.id);
    if (!c.call_nodes.empty()) out.push_back(std::move(c));
  }
  return out;
}

size_t WorkspaceIndex::augment(analysis::ParsedUnit& unit, size_t max_bodies,
                               std::vector<std::shared_ptr<const void>>* used) const {
  if (used) used->clear();
  std::unordered_set<std::string> local;  // keys with a body in the unit, and keys visited
  for (const auto& f : unit.functions) local.insert(f.key);
  for (const auto& [key, f] : unit.workspace_bodies) local.insert(key);
  const std::unordered_set<std::string> own = local;
  std::deque<std::string> todo;
  auto want = [&](const FunctionInfo& f) {
    for (const auto& n : f.nodes)
      if (n.kind == NodeKind::Call && !n.call.key.empty() && !n.call.system &&
          !local.count(n.call.key))
        todo.push_back(n.call.key);
  };
  for (const auto& f : unit.functions) want(f);
  for (const auto& [key, f] : unit.workspace_bodies) want(f);
  std::unordered_set<std::string> added;
  {
    MutexLock lock(mu_);
    while (!todo.empty() && added.size() < max_bodies) {
      std::string key = std::move(todo.front());
      todo.pop_front();
      if (local.count(key)) continue;
      local.insert(key);
      auto it = by_key_.find(key);
      if (it == by_key_.end() || it->second.fn->file == unit.path) continue;
      std::optional<FunctionInfo> decoded = decode(*it->second.fn);
      if (!decoded) continue;
      FunctionInfo body = std::move(*decoded);
      want(body);
      added.insert(key);
      if (used) used->push_back(it->second.fn);
      unit.workspace_bodies.emplace(key, std::move(body));
    }
  }
  if (added.empty()) return 0;
  // Calls to an added body have one now; so do the added bodies' calls back into this unit
  // (their own TU only saw a declaration): that is how a cycle across files is seen and cut.
  auto mark = [&](FunctionInfo& f, bool from_index) {
    for (auto& n : f.nodes)
      if (n.kind == NodeKind::Call &&
          (added.count(n.call.key) || (from_index && own.count(n.call.key))))
        n.call.in_workspace = true;
  };
  for (auto& f : unit.functions) mark(f, false);
  for (auto& [key, f] : unit.workspace_bodies) mark(f, added.count(key) > 0);
  return added.size();
}

size_t WorkspaceIndex::functionCount() const {
  MutexLock lock(mu_);
  return by_key_.size();
}

namespace {

size_t bytesOf(const std::string& s) { return s.capacity() > 15 ? s.capacity() + 1 : 0; }

}  // namespace

size_t WorkspaceIndex::approxBytes() const {
  MutexLock lock(mu_);
  std::unordered_set<const Stored*> seen;
  size_t b = 0;
  auto count = [&](const std::map<std::string, std::vector<StoredPtr>>& files) {
    for (const auto& [file, fns] : files) {
      b += bytesOf(file) + 64 + fns.capacity() * sizeof(StoredPtr);
      for (const auto& f : fns) {
        if (!seen.insert(f.get()).second) continue;
        b += sizeof(Stored) + 32 + bytesOf(f->key) + bytesOf(f->file) + bytesOf(f->summary) +
             f->callees.capacity() * sizeof(std::string);
        for (const auto& c : f->callees) b += bytesOf(c);
      }
    }
  };
  count(indexed_);
  count(open_);
  b += by_key_.size() * (sizeof(std::string) + sizeof(KeyEntry) + 32);
  for (const auto& [key, callers] : callers_) {
    b += bytesOf(key) + sizeof(std::string) + 64;
    for (const auto& [c, files] : callers) b += bytesOf(c) + sizeof(std::string) + sizeof(int) + 32;
  }
  return b;
}

size_t WorkspaceIndex::fileCount() const {
  MutexLock lock(mu_);
  std::set<std::string> files;
  for (const auto& [f, v] : indexed_) files.insert(f);
  for (const auto& [f, v] : open_) files.insert(f);
  return files.size();
}

}  // namespace perfhat::index
