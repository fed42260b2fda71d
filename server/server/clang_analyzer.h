// The shipped Analyzer: compile flags from compile_commands.json (or fallback flags, with a
// warning), one libclang TranslationUnit per open document reparsed with the unsaved text
// (preamble reused), the simplified AST, ONE bulk feedback fetch for every key the TU
// references, then specification + inference (server/analysis/analyze.h).
#pragma once

#include <map>
#include <memory>
#include <string>

#include "server/analysis/options.h"
#include "server/analysis/translation_unit.h"
#include "server/server/analyzer.h"

namespace perfhat::server {

class ClangAnalyzer : public Analyzer {
 public:
  ClangAnalyzer() = default;
  analysis::SnapshotPtr analyze(const AnalysisInput& in, const FeedbackFetch& fetch,
                                std::vector<std::string>& warnings) override;
  void close(const std::string& path) override { tus_.erase(path); }
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
  analysis::AnalysisOptions options_;
  std::vector<std::string> config_warnings_;
  std::map<std::string, Entry> tus_;
};

}  // namespace perfhat::server
