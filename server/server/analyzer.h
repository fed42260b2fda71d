// The analysis strategy the server schedules: text in, immutable snapshot out. The shipped
// implementation (ClangAnalyzer) parses with libclang; tests of the scheduling (debounce,
// cancellation, deferred requests) inject one whose timing they control.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "server/analysis/feedback_view.h"
#include "server/analysis/snapshot.h"
#include "server/server/config.h"
#include "server/server/index_progress.h"

namespace perfhat::index {
class WorkspaceIndex;
}

namespace perfhat::server {

// One bulk request (through the cache) for every key a translation unit references.
using FeedbackFetch = std::function<std::shared_ptr<const analysis::FeedbackView>(
    const std::vector<std::string>& keys)>;

struct AnalysisInput {
  std::string path;  // absolute file path
  std::string text;  // unsaved contents
  int version = 0;
};

class Analyzer {
 public:
  virtual ~Analyzer() = default;
  // Always called from the same (worker) thread. Must not throw for bad input: parse errors
  // go into Snapshot::problems. `warnings` collects things the user should be told once (e.g. a
  // missing compile database).
  virtual analysis::SnapshotPtr analyze(const AnalysisInput& in, const FeedbackFetch& fetch,
                                        std::vector<std::string>& warnings) = 0;
  // The document was closed: release what is held for it (libclang TU, preamble).
  virtual void close(const std::string& /*path*/) {}
  // New configuration (workspace root for the project's .perfhat.json and workspace bodies).
  virtual void configure(const Config& /*cfg*/, const std::string& /*root*/) {}
  // The workspace index (issue #25), when this analyzer keeps one: the same object for the
  // analyzer's lifetime, thread-safe. Progress of its background passes goes to `sink`, which
  // is set before the first configure().
  virtual std::shared_ptr<index::WorkspaceIndex> workspaceIndex() const { return nullptr; }
  virtual void setIndexProgress(IndexProgressSink /*sink*/) {}
};

}  // namespace perfhat::server
