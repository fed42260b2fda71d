// The index on disk (issue #25): per translation unit, the stamp it was indexed under (content,
// compile flags, the workspace headers it included, each with its content hash) and the cost
// summaries of the functions it defines. SQLite, one file beside the editor's other local state
// (`<root>/.cache/perfhat/index.sqlite` by default, docs/index.md).
//
// The schema is versioned (PRAGMA user_version). A file of another version, or one SQLite
// finds corrupt, is deleted and recreated: the index is a cache, rebuilt from the sources.
// Bounded: summaries over kMaxSummaryBytes and files beyond kMaxFunctionsPerFile are not kept.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"
#include "common/thread_annotations.h"
#include "server/analysis/snapshot.h"

namespace perfhat::index {

// What a translation unit's summaries were computed from. Equal stamps: nothing to recompute.
struct FileStamp {
  uint64_t content = 0;  // the file's bytes
  uint64_t flags = 0;    // its compile arguments
  // Workspace headers the TU included (system headers excluded), each with its content hash.
  std::vector<std::pair<std::string, uint64_t>> headers;
  bool operator==(const FileStamp&) const = default;
};

class SummaryStore {
 public:
  // 2: summaries keep calls through pointers; 3: `a && f()` / `a || f()` are branches;
  // 4: branch priors' heuristics and trip counts' sources as facts, not text;
  // 5: an evaluated trip count's expression as its tokens, whole
  static constexpr int kSchemaVersion = 5;
  static constexpr size_t kMaxSummaryBytes = 1 << 20;
  static constexpr size_t kMaxFunctionsPerFile = 20'000;

  // Opens (creating the directory and file). Fails (with the reason) when the file cannot be
  // created at all; a corrupt or foreign-version file is replaced (`rebuiltReason()`).
  static Result<std::unique_ptr<SummaryStore>> open(const std::string& path);
  ~SummaryStore();
  SummaryStore(const SummaryStore&) = delete;
  SummaryStore& operator=(const SummaryStore&) = delete;

  std::optional<FileStamp> stamp(const std::string& file) const;
  std::vector<analysis::FunctionInfo> functions(const std::string& file) const;
  // Replaces everything stored for `file` in one transaction.
  void put(const std::string& file, const FileStamp& stamp,
           const std::vector<analysis::FunctionInfo>& functions);
  void erase(const std::string& file);
  std::vector<std::string> files() const;

  const std::string& path() const { return path_; }
  // Why the file on disk was replaced when it was opened ("" when it was used as is).
  const std::string& rebuiltReason() const { return rebuilt_; }

 private:
  SummaryStore() = default;
  bool exec(const char* sql) const REQUIRES(mu_);

  std::string path_;
  std::string rebuilt_;
  mutable Mutex mu_;
  sqlite3* db_ GUARDED_BY(mu_) = nullptr;
};

}  // namespace perfhat::index
