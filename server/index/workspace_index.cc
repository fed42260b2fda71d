#include "server/index/workspace_index.h"

#include <deque>
#include <unordered_set>

namespace perfhat::index {

using analysis::FunctionInfo;
using analysis::NodeKind;

namespace {

std::vector<FunctionPtr> share(std::vector<FunctionInfo> functions) {
  std::vector<FunctionPtr> out;
  out.reserve(functions.size());
  for (auto& f : functions)
    if (!f.key.empty() && !f.nodes.empty())
      out.push_back(std::make_shared<const FunctionInfo>(std::move(f)));
  return out;
}

}  // namespace

const std::vector<FunctionPtr>* WorkspaceIndex::effective(const std::string& file) const {
  if (auto it = open_.find(file); it != open_.end()) return &it->second;
  if (auto it = indexed_.find(file); it != indexed_.end()) return &it->second;
  return nullptr;
}

void WorkspaceIndex::unlink(const std::string& file) {
  const auto* fns = effective(file);
  if (!fns) return;
  for (const FunctionPtr& f : *fns) {
    auto it = by_key_.find(f->key);
    if (it != by_key_.end() && it->second == f) by_key_.erase(it);
    for (const auto& n : f->nodes)
      if (n.kind == NodeKind::Call && !n.callee_key.empty()) {
        auto c = callers_.find(n.callee_key);
        if (c == callers_.end()) continue;
        c->second.erase(f->key);
        if (c->second.empty()) callers_.erase(c);
      }
  }
}

void WorkspaceIndex::link(const std::string& file) {
  const auto* fns = effective(file);
  if (!fns) return;
  for (const FunctionPtr& f : *fns) {
    // A body from the file itself beats one another TU saw in a header: same key, same code,
    // and the file's own copy is the one its edits update.
    auto [it, inserted] = by_key_.emplace(f->key, f);
    if (!inserted && f->file == file) it->second = f;
    for (const auto& n : f->nodes)
      if (n.kind == NodeKind::Call && !n.callee_key.empty()) callers_[n.callee_key].insert(f->key);
  }
}

void WorkspaceIndex::setIndexed(const std::string& file, std::vector<FunctionInfo> functions) {
  MutexLock lock(mu_);
  unlink(file);
  indexed_[file] = share(std::move(functions));
  link(file);
}

std::vector<std::string> WorkspaceIndex::setOpen(const std::string& file,
                                                 const std::vector<FunctionInfo>& functions) {
  MutexLock lock(mu_);
  std::unordered_map<std::string, uint64_t> before;
  if (const auto* fns = effective(file))
    for (const auto& f : *fns) before[f->key] = f->body_hash;
  unlink(file);
  std::vector<FunctionInfo> copy;
  copy.reserve(functions.size());
  for (const auto& f : functions) {
    FunctionInfo c = f;
    // Summaries carry structure only: what inference attached is the open document's business.
    for (auto& n : c.nodes) {
      n.estimate = {};
      n.measured.reset();
      n.baseline.reset();
      n.implementations.clear();
    }
    c.added.clear();
    c.matched.clear();
    copy.push_back(std::move(c));
  }
  open_[file] = share(std::move(copy));
  link(file);
  std::vector<std::string> changed;
  for (const auto& f : open_[file]) {
    auto it = before.find(f->key);
    if (it == before.end() || it->second != f->body_hash) changed.push_back(f->key);
    if (it != before.end()) before.erase(it);
  }
  for (const auto& [key, hash] : before) changed.push_back(key);
  return changed;
}

void WorkspaceIndex::closeOpen(const std::string& file) {
  MutexLock lock(mu_);
  if (!open_.count(file)) return;
  unlink(file);
  open_.erase(file);
  link(file);
}

FunctionPtr WorkspaceIndex::find(const std::string& key) const {
  MutexLock lock(mu_);
  auto it = by_key_.find(key);
  return it == by_key_.end() ? nullptr : it->second;
}

std::vector<Caller> WorkspaceIndex::callersOf(const std::string& key) const {
  MutexLock lock(mu_);
  std::vector<Caller> out;
  auto it = callers_.find(key);
  if (it == callers_.end()) return out;
  for (const std::string& caller : it->second) {
    auto f = by_key_.find(caller);
    if (f == by_key_.end()) continue;
    Caller c{f->second, {}};
    for (const auto& n : f->second->nodes)
      if (n.kind == NodeKind::Call && n.callee_key == key) c.call_nodes.push_back(n.id);
    if (!c.call_nodes.empty()) out.push_back(std::move(c));
  }
  return out;
}

size_t WorkspaceIndex::augment(analysis::ParsedUnit& unit, size_t max_bodies) const {
  std::unordered_set<std::string> local;  // keys with a body in the unit, and keys visited
  for (const auto& f : unit.functions) local.insert(f.key);
  for (const auto& [key, f] : unit.workspace_bodies) local.insert(key);
  const std::unordered_set<std::string> own = local;
  std::deque<std::string> todo;
  auto want = [&](const FunctionInfo& f) {
    for (const auto& n : f.nodes)
      if (n.kind == NodeKind::Call && !n.callee_key.empty() && !n.callee_system &&
          !local.count(n.callee_key))
        todo.push_back(n.callee_key);
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
      if (it == by_key_.end() || it->second->file == unit.path) continue;
      FunctionInfo body = *it->second;
      want(body);
      added.insert(key);
      unit.workspace_bodies.emplace(key, std::move(body));
    }
  }
  if (added.empty()) return 0;
  // Calls to an added body have one now; so do the added bodies' calls back into this unit
  // (their own TU only saw a declaration): that is how a cycle across files is seen and cut.
  auto mark = [&](FunctionInfo& f, bool from_index) {
    for (auto& n : f.nodes)
      if (n.kind == NodeKind::Call &&
          (added.count(n.callee_key) || (from_index && own.count(n.callee_key))))
        n.callee_in_workspace = true;
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

size_t bytesOf(const FunctionInfo& f) {
  size_t b = sizeof(FunctionInfo) + bytesOf(f.key) + bytesOf(f.mangled) + bytesOf(f.name) +
             bytesOf(f.file) + f.nodes.capacity() * sizeof(analysis::Node);
  for (const auto& n : f.nodes)
    b += bytesOf(n.callee_key) + bytesOf(n.callee_mangled) + bytesOf(n.callee_name) +
         bytesOf(n.producer_key) + bytesOf(n.producer_mangled) + bytesOf(n.range_var) +
         bytesOf(n.range_var_name) + bytesOf(n.fills_var) + bytesOf(n.branch_prior_reason) +
         bytesOf(n.constant_trip_source) + n.children.capacity() * sizeof(int);
  return b;
}

}  // namespace

size_t WorkspaceIndex::approxBytes() const {
  MutexLock lock(mu_);
  std::unordered_set<const FunctionInfo*> seen;
  size_t b = 0;
  auto count = [&](const std::map<std::string, std::vector<FunctionPtr>>& files) {
    for (const auto& [file, fns] : files) {
      b += bytesOf(file) + fns.capacity() * sizeof(FunctionPtr);
      for (const auto& f : fns)
        if (seen.insert(f.get()).second) b += bytesOf(*f) + 32;  // + the shared_ptr's block
    }
  };
  count(indexed_);
  count(open_);
  b += by_key_.size() * (sizeof(std::string) + sizeof(FunctionPtr) + 32);
  for (const auto& [key, callers] : callers_) {
    b += bytesOf(key) + sizeof(std::string) + 64;
    for (const auto& c : callers) b += bytesOf(c) + sizeof(std::string) + 32;
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
