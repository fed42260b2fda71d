// The workspace index as the language server runs it (issue #25, docs/index.md): settings from
// the "analysis.index" object, the store file, and the background indexer on a thread of its
// own (large stack, idle priority). The analysis reads index() for callees in other files;
// progress goes to a sink the server turns into `$/progress`.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "server/index/idle_handoff.h"
#include "server/index/indexer.h"
#include "server/index/summary_store.h"
#include "server/index/workspace_index.h"
#include "server/server/index_progress.h"
#include "server/server/large_stack_thread.h"

namespace perfhat::server {

// "analysis": {"index": {"enabled": true, "path": "", "max_files": 50000}}
struct IndexSettings {
  bool enabled = true;
  std::string path;  // "" = <root>/.cache/perfhat/index.sqlite
  size_t max_files = 50'000;
  bool operator==(const IndexSettings&) const = default;
};
// Bad values keep the default and add a warning.
IndexSettings indexSettingsFrom(const nlohmann::json& analysis, std::vector<std::string>& warnings);

class IndexSession {
 public:
  // Starts a pass over `database` at once, filling `index`. `store_path` "" = no persistence.
  IndexSession(std::shared_ptr<index::WorkspaceIndex> index, std::string database,
               std::string store_path, analysis::AnalysisOptions options, size_t max_files,
               IndexProgressSink sink);
  ~IndexSession();  // cancels the pass (it ends after the file being parsed) and joins
  IndexSession(const IndexSession&) = delete;
  IndexSession& operator=(const IndexSession&) = delete;

  const std::shared_ptr<index::WorkspaceIndex>& index() const { return index_; }
  index::Indexer& indexer() { return *indexer_; }
  const std::string& database() const { return database_; }

 private:
  std::string database_;
  std::shared_ptr<index::WorkspaceIndex> index_;
  // Applies the pass' summaries and progress at normal priority (declared before the pass'
  // thread: destroyed after it, so that it runs what the pass pushed last).
  std::unique_ptr<index::IdleHandoff> handoff_;
  std::unique_ptr<index::Indexer> indexer_;
  LargeStackThread thread_;
};

}  // namespace perfhat::server
