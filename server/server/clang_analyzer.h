// The shipped Analyzer: compile flags from compile_commands.json (or fallback flags, with a
// warning), one libclang TranslationUnit per open document reparsed with the unsaved text
// (preamble reused), the simplified AST, ONE bulk feedback fetch for every key the TU
// references, then specification + inference (server/analysis/analyze.h).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>

#include "server/analysis/ast_builder.h"
#include "server/analysis/inference_reuse.h"
#include "server/analysis/options.h"
#include "server/analysis/translation_unit.h"
#include "server/server/analyzer.h"
#include "server/server/deployed_source.h"
#include "server/server/index_session.h"
#include "server/server/parse_thread.h"
#include "server/server/walk_cache.h"

namespace perfhat::server {

// Why an analysis reused nothing, in the words of the edit trace's line ("other feedback", …);
// "" for NoReuse::None.
std::string_view noReuseText(analysis::NoReuse why);

class ClangAnalyzer : public Analyzer {
 public:
  ClangAnalyzer() = default;
  analysis::SnapshotPtr analyze(const AnalysisInput& in, const FeedbackFetch& fetch,
                                std::vector<std::string>& warnings) override;
  ~ClangAnalyzer() override;
  void close(const std::string& path) override;
  void configure(const Config& cfg, const std::string& root) override;
  std::shared_ptr<index::WorkspaceIndex> workspaceIndex() const override { return index_; }
  void setIndexProgress(IndexProgressSink sink) override { index_sink_ = std::move(sink); }

  // Off: no background pass (`--check`, which indexes with indexNow or not at all, so that its
  // output does not depend on a thread's progress). Set before configure().
  void setBackgroundIndex(bool on) { background_index_ = on; }
  // --check over several files: indexes every file of `database` now, on the calling thread,
  // through the same store as the server (docs/index.md).
  index::IndexStats indexNow(const std::string& database, const std::string& root);
  // The compile database the index covers for `root`: analysis.compile_commands when set, else
  // compile_commands.json at the root or in its build/ ("" when none; no upward search, so a
  // workspace inside a larger checkout does not index the larger one).
  std::string indexDatabase(const std::string& root) const;

  // How libclang produced the last build of `path`: a reparse of its translation unit (not a
  // fresh parse), with its headers read from the precompiled preamble.
  struct ParseInfo {
    bool reparsed = false;
    bool preamble = false;
  };
  ParseInfo lastParse(const std::string& path) const;
  // Whether the last build of `path` walked the workspace headers' bodies or reused them
  // (walk_cache.h); empty for a path not open.
  WalkCache::LastBuild lastHeaderBodies(const std::string& path) const;
  // Where the last analyze() spent its time: libclang's reparse (wall and CPU, the parse thread's
  // included), then in CPU time of
  // the calling thread the AST walk (header key included), the workspace index's bodies, the
  // feedback fetch, the inference, and what follows it (the open document into the index,
  // changed callees). Milliseconds.
  struct Split {
    double parse = 0, parse_cpu = 0, walk = 0, augment = 0, fetch = 0, infer = 0, after = 0;
    double parse_thread_cpu = 0;  // the part of parse_cpu spent on the parse thread
  };
  const Split& lastSplit() const { return split_; }
  // How many parses and reparses have run on the parse thread (parse_thread.h).
  size_t parseThreadRuns() const { return parse_thread_.runs(); }
  // How many deployed texts were parsed (a document opened with the deployed text itself takes
  // its own walk instead).
  size_t deployedParses() const { return deployed_parses_; }
  // What the last analysis of `path` reused of the one before (inference_reuse.h); empty for a
  // path not open.
  analysis::InferenceReuse::Last lastInference(const std::string& path) const;
  // Open documents holding a libclang translation unit now (at most the configured
  // maxParsedDocuments).
  size_t parsedDocuments() const;

  const analysis::AnalysisOptions& options() const { return options_; }
  // Options from the config's "analysis" object; problems are appended to `warnings`.
  static analysis::AnalysisOptions optionsFrom(const Config& cfg, const std::string& root,
                                               std::vector<std::string>& warnings);

 private:
  struct Entry {
    std::unique_ptr<analysis::TranslationUnit> tu;
    std::vector<std::string> args;
    bool reparsed = false;    // the last build reparsed `tu`
    uint64_t last_built = 0;  // build_clock_ at its last build: the least recent gives up `tu`
    WalkCache headers;
    analysis::InferenceReuse inference;  // the last analysis, for the next edit's
    std::vector<std::shared_ptr<const void>> index_bodies;  // what the index added to the unit
  };
  // Releases the translation units of the least recently built documents other than `keep`
  // until at most max_parsed_ hold one.
  void releaseIdleUnits(const std::string& keep);
  // The deployed text of a document, parsed once per revision and flags. A file the revision
  // does not have, or whose text does not parse, is remembered too (`found` false): git is asked
  // once per revision, not at every keystroke.
  struct Deployed {
    std::string revision;
    std::vector<std::string> args;
    analysis::ParsedUnit unit;
    bool found = false;
  };
  // The deployed unit of this build (none when the feedback names no revision of the file's
  // repository), and `view` (the feedback of `keys`, the unit's referenced keys) widened to the
  // calls only the deployed text makes.
  struct DeployedLookup {
    analysis::DeployedUnit unit;
    double ms = 0;        // finding and parsing the deployed text
    double fetch_ms = 0;  // the second lookup, for the deployed text's own calls
  };
  DeployedLookup lookUpDeployed(const AnalysisInput& in, const std::vector<std::string>& args,
                                const WalkCache& walk, const analysis::ParsedUnit& unit,
                                std::vector<std::string> keys, const FeedbackFetch& fetch,
                                std::shared_ptr<const analysis::FeedbackView>& view,
                                std::vector<std::string>& warnings);
  // The parsed deployed text of `path` at the revision the feedback names, or nullptr. When
  // `document` (the text `unit` was walked from, lent by `walk`) is that text, its functions as
  // walked are the deployed ones: the same text, flags and headers walk to the same definitions,
  // so it is not parsed again.
  const Deployed* deployedUnit(const std::string& path, const std::vector<std::string>& args,
                               std::string_view document, const WalkCache& walk,
                               const analysis::ParsedUnit& unit, const analysis::FeedbackView& view,
                               std::vector<std::string>& warnings);

  // Workspace index (clang_analyzer_index.cc): bodies of other files for the inference, and
  // callees whose body differs from what production ran.
  void startIndex(const Config& cfg, const std::string& root);
  void markChangedCallees(analysis::Snapshot& snap, const analysis::FeedbackView& view);
  // Body hashes of `file` as of `revision`, parsed once (nullptr when git or libclang fails).
  const std::unordered_map<std::string, uint64_t>* deployedHashes(const std::string& file,
                                                                  const std::string& revision);

  std::shared_ptr<index::WorkspaceIndex> index_ = std::make_shared<index::WorkspaceIndex>();
  IndexProgressSink index_sink_;
  IndexSettings index_settings_;
  std::string index_store_;
  std::unique_ptr<IndexSession> index_session_;
  bool background_index_ = true;
  std::map<std::pair<std::string, std::string>, std::unordered_map<std::string, uint64_t>>
      deployed_hashes_;
  std::set<std::pair<std::string, std::string>> deployed_hashes_failed_;

  analysis::AnalysisOptions options_;
  std::vector<std::string> config_warnings_;
  std::map<std::string, Entry> tus_;
  size_t max_parsed_ = Config().max_parsed_documents;
  uint64_t build_clock_ = 0;
  ParseThread parse_thread_;  // libclang's parses of tus_ (parse_thread.h)
  Split split_;
  DeployedSource deployed_source_;
  std::map<std::string, Deployed> deployed_units_;
  size_t deployed_parses_ = 0;
};

}  // namespace perfhat::server
