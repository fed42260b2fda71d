// The workspace index in memory (issue #25): every function definition of the workspace by key,
// as a cost summary (the analysis' FunctionInfo without data), and who calls it. Filled by the
// background indexer (indexer.h) and by the open documents: an open document's functions, as
// last analysed, replace the indexed text of the same file until it is closed, so an edit to a
// callee reaches its callers in other files before anything is saved.
//
// Thread-safe: the indexer thread writes, the analysis worker and the reader thread read.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/thread_annotations.h"
#include "server/analysis/ast_builder.h"

namespace perfhat::index {

using FunctionPtr = std::shared_ptr<const analysis::FunctionInfo>;

// One function calling another: its summary and the call nodes that call the callee.
struct Caller {
  FunctionPtr function;
  std::vector<int> call_nodes;  // node ids in function->nodes
};

class WorkspaceIndex {
 public:
  // A file's summaries from the indexer (parsed or read back from the store).
  void setIndexed(const std::string& file, std::vector<analysis::FunctionInfo> functions);
  // An open document's functions, as just analysed. Returns the keys whose body changed (hash
  // differs, added or removed) against what the index held for them before.
  std::vector<std::string> setOpen(const std::string& file,
                                   const std::vector<analysis::FunctionInfo>& functions);
  void closeOpen(const std::string& file);

  FunctionPtr find(const std::string& key) const;
  std::vector<Caller> callersOf(const std::string& key) const;

  // Adds to `unit.workspace_bodies` the summaries of the functions its code calls that are
  // defined in other files, transitively (at most `max_bodies`), and marks the calls to them as
  // having a body: the inference then costs them bottom-up like a body in a header. Returns how
  // many were added. `used`, when given, gets the index's stored summaries the added bodies were
  // decoded from, in the order added: a stored summary is immutable, so the same list (the same
  // objects, kept alive by the list) means the same bodies.
  size_t augment(analysis::ParsedUnit& unit, size_t max_bodies = 4096,
                 std::vector<std::shared_ptr<const void>>* used = nullptr) const;

  size_t functionCount() const;
  // Heap bytes the summaries and the caller map hold (strings, nodes, containers), estimated
  // from their sizes and capacities: what the index costs in memory.
  size_t approxBytes() const;
  size_t fileCount() const;

 private:
  // A function as the index keeps it: its summary encoded (summary_codec.h, about a fifth of
  // the decoded tree's size), decoded when an analysis or a command needs the body.
  struct Stored {
    std::string key, file;
    uint64_t body_hash = 0;
    analysis::Range range;
    uint64_t layout = 0;  // its positions, lines counted from its first line (layoutOf)
    // Lines the function moved since `summary` was encoded: decode() adds them, so that an edit
    // above a function does not encode it again.
    int moved_lines = 0;
    std::string summary;
    std::vector<std::string> callees;
  };
  using StoredPtr = std::shared_ptr<const Stored>;
  static StoredPtr store(const analysis::FunctionInfo& f);
  static std::optional<analysis::FunctionInfo> decode(const Stored& st);
  static std::vector<StoredPtr> storeAll(const std::vector<analysis::FunctionInfo>& functions);
  // The functions a file contributes: the open text when there is one, else the indexed one.
  const std::vector<StoredPtr>* effective(const std::string& file) const REQUIRES(mu_);
  // Makes by_key_ and callers_ hold `after` instead of `before` as what `file` contributes
  // (either may be null: nothing), touching only the pairs that differ.
  void relink(const std::string& file, const std::vector<StoredPtr>* before,
              const std::vector<StoredPtr>* after) REQUIRES(mu_);
  void relinkInPlace(const std::vector<StoredPtr>& before, const std::vector<StoredPtr>& after)
      REQUIRES(mu_);
  void linkCaller(const std::string& callee, std::string_view caller) REQUIRES(mu_);
  void unlinkCaller(const std::string& callee, std::string_view caller) REQUIRES(mu_);
  // Gives the keys whose function `file` no longer provides, and other files still do, another
  // file's function.
  void adoptFromOtherFiles(const std::string& file) REQUIRES(mu_);
  // `previous` again (or moved by whole lines) when `f` is the same body with the same layout,
  // else null; `layout` caches f's layout across candidates.
  static StoredPtr reuse(const StoredPtr& previous, const analysis::FunctionInfo& f,
                         std::optional<uint64_t>& layout);

  mutable Mutex mu_;
  std::map<std::string, std::vector<StoredPtr>> indexed_ GUARDED_BY(mu_);
  std::map<std::string, std::vector<StoredPtr>> open_ GUARDED_BY(mu_);
  // A key's function as find() answers it, and how many files provide the key (every TU that
  // includes a header sees its inline functions): a file giving a key up leaves another's copy.
  struct KeyEntry {
    StoredPtr fn;
    int files = 0;
  };
  std::unordered_map<std::string, KeyEntry> by_key_ GUARDED_BY(mu_);
  // callee key → caller key → how many files have a function of the caller's key calling it.
  std::unordered_map<std::string, std::map<std::string, int, std::less<>>> callers_ GUARDED_BY(mu_);
};

}  // namespace perfhat::index
