// The shipped Analyzer: compile flags from compile_commands.json (or fallback flags, with a
// warning), one libclang TranslationUnit per open document reparsed with the unsaved text
// (preamble reused), the simplified AST, ONE bulk feedback fetch for every key the TU
// references, then specification + inference (server/analysis/analyze.h).
#pragma once

#include <map>
#include <memory>
#include <string>

#include "server/analysis/ast_builder.h"
#include "server/analysis/options.h"
#include "server/analysis/translation_unit.h"
#include "server/server/analyzer.h"
#include "server/server/deployed_source.h"

namespace perfhat::server {

class ClangAnalyzer : public Analyzer {
 public:
  ClangAnalyzer() = default;
  analysis::SnapshotPtr analyze(const AnalysisInput& in, const FeedbackFetch& fetch,
                                std::vector<std::string>& warnings) override;
  void close(const std::string& path) override {
    tus_.erase(path);
    deployed_units_.erase(path);
  }
  void configure(const Config& cfg, const std::string& root) override;

  const analysis::AnalysisOptions& options() const { return options_; }
  // Options from the config's "analysis" object; problems are appended to `warnings`.
  static analysis::AnalysisOptions optionsFrom(const Config& cfg, const std::string& root,
                                               std::vector<std::string>& warnings);

 private:
  struct Entry {
    std::unique_ptr<analysis::TranslationUnit> tu;
    std::vector<std::string> args;
  };
  // The deployed text of a document, parsed once per revision and flags. A file the revision
  // does not have, or whose text does not parse, is remembered too (`found` false): git is asked
  // once per revision, not at every keystroke.
  struct Deployed {
    std::string revision;
    std::vector<std::string> args;
    analysis::ParsedUnit unit;
    bool found = false;
  };
  // The parsed deployed text of `path` at the revision the feedback names, or nullptr.
  const Deployed* deployedUnit(const std::string& path, const std::vector<std::string>& args,
                               const analysis::ParsedUnit& unit, const analysis::FeedbackView& view,
                               std::vector<std::string>& warnings);

  analysis::AnalysisOptions options_;
  std::vector<std::string> config_warnings_;
  std::map<std::string, Entry> tus_;
  DeployedSource deployed_source_;
  std::map<std::string, Deployed> deployed_units_;
};

}  // namespace perfhat::server
