// The background indexer (issue #25): one pass over a compile database, each translation unit
// parsed once (libclang, no preamble) and turned into cost summaries by the analysis' own AST
// builder, or read back from the SummaryStore when its stamp (content, flags, included
// workspace headers) is unchanged. Results go to a WorkspaceIndex.
//
// It never delays the file being edited: the thread that runs a pass drops to the idle
// scheduling class, and between files the pass waits while foreground analysis runs (the
// server brackets each rebuild with foregroundBegin/End). cancel() ends a pass after the file
// being parsed. A pass at idle priority takes no lock another thread takes (a preempted idle
// thread holding one would stall that thread): foreground state is atomic, and summaries and
// progress are applied through IndexerOptions::publish (the server's IdleHandoff).
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "server/analysis/options.h"
#include "server/index/summary_store.h"
#include "server/index/workspace_index.h"

namespace perfhat::index {

struct IndexerOptions {
  std::string database;  // compile_commands.json (a file)
  analysis::AnalysisOptions analysis;
  size_t max_files = 50'000;  // larger databases are indexed in part (the first files, sorted)
  bool idle_priority = true;  // lower the calling thread to SCHED_IDLE for the pass
  // After foreground analysis ends, wait this long before the next file: typing comes in bursts.
  std::chrono::milliseconds foreground_grace{150};
  // Where summaries and progress reports are applied: the server passes an IdleHandoff, whose
  // normal-priority thread takes the index's lock and the server's. Empty: at once, on the
  // pass' own thread (--check and the bench, which do not run at idle priority).
  std::function<void(std::function<void()>)> publish;
};

struct IndexProgress {
  size_t done = 0;
  size_t total = 0;
  std::string file;  // the file just finished
};

struct IndexStats {
  size_t files = 0;      // in the database (up to max_files)
  size_t parsed = 0;     // summaries computed
  size_t reused = 0;     // read back from the store, stamp unchanged
  size_t failed = 0;     // unreadable or unparsable
  size_t functions = 0;  // in the index after the pass; 0 when results are published elsewhere
  double parse_ms = 0;   // libclang alone, summed over the parsed files
  double wall_ms = 0;
  bool cancelled = false;
};

class Indexer {
 public:
  // `store` may be null (no persistence).
  Indexer(std::shared_ptr<WorkspaceIndex> index, std::shared_ptr<SummaryStore> store,
          IndexerOptions options);

  IndexStats run(const std::function<void(const IndexProgress&)>& progress = {});
  void cancel();
  bool cancelled() const { return cancelled_.load(); }

  void foregroundBegin();
  void foregroundEnd();

  // Indexes one file now (a header or the file changed on disk): `reused` when its stamp held.
  bool indexFile(const std::string& file, bool* reused = nullptr, double* parse_ms = nullptr);

 private:
  void waitForForeground();
  void publish(std::function<void()> work);
  // The stamp `file` would be indexed under now; headers from the stored stamp are re-hashed.
  FileStamp currentStamp(const std::string& file, const std::string& text,
                         const std::vector<std::string>& args,
                         const std::vector<std::pair<std::string, uint64_t>>& headers);
  uint64_t headerHash(const std::string& path);

  std::shared_ptr<WorkspaceIndex> index_;
  std::shared_ptr<SummaryStore> store_;
  IndexerOptions options_;
  std::atomic<bool> cancelled_{false};
  // Foreground analyses running, and when the last one ended (steady clock, ns): atomics, so
  // that the worker's foregroundBegin never waits for the idle thread.
  std::atomic<int> foreground_{0};
  std::atomic<int64_t> foreground_ended_ns_{0};
  // Header hashes of this pass (a header included by many TUs is read once per pass).
  std::unordered_map<std::string, uint64_t> header_hashes_;
};

// Reads a whole file; std::nullopt when it cannot be read.
std::optional<std::string> readFile(const std::string& path);

}  // namespace perfhat::index
