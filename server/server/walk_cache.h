// What the last AST walk of one open document built, kept for the next edit (issue #25, "edits
// that feel instant"): an edit reparses the document with its preamble, and the walk then builds
// only what the edit can have changed.
// - The workspace headers' function bodies are the same as at the last build unless something
//   they depend on changed (the key below): then the walk skips every definition outside the
//   main file and takes the headers' from here.
// - The main file's definitions whose text did not change are taken from the last walk too,
//   under the conditions of server/analysis/ast_reuse.h (the same key among them).
//
// What the headers' bodies depend on, hashed into the key: the compile flags; every file the
// translation unit includes, in inclusion order, with its content for files under the workspace
// root (their bodies are walked) and its modification time for the others (their declarations
// and macros shape those bodies; libclang rebuilds the preamble when they change); and the main
// file's text up to its last #include (the macros and declarations a header sees before it).
// An edit below the last #include leaves the key as it was. header_context.h computes it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "server/analysis/ast_builder.h"
#include "server/server/header_context.h"

namespace perfhat::server {

class WalkCache {
 public:
  // The unit of `tu` as buildAst makes it, with the headers' bodies walked only when the key
  // differs from the last build's. Its main-file functions are lent, not copied, from the cache:
  // give the unit back with giveBack() once done with it (what the cache keeps for the next
  // build is then exactly what this one walked or took). A unit not given back leaves the next
  // build nothing of the main file to reuse.
  analysis::ParsedUnit lend(const analysis::TranslationUnit& tu,
                            const analysis::AnalysisOptions& options);
  // Takes the main-file functions of the unit lend() last returned back into the cache, as
  // lend() made them (index::WorkspaceIndex::augment marks calls in them, which is undone).
  // `unit` must not have been reordered (a unit that is not the one lent, or that was, empties
  // the cache's main-file functions, as does a failed allocation: it is called from
  // destructors).
  void giveBack(analysis::ParsedUnit&& unit) noexcept;
  // A copy of the lent unit's main-file functions as lend() made them (the index's marks
  // undone): what walking the same text again would give, without libclang.
  std::vector<analysis::FunctionInfo> walkedFunctions(const analysis::ParsedUnit& unit) const;
  // lend(), a copy of the unit, and giveBack(): for callers that keep the unit.
  analysis::ParsedUnit build(const analysis::TranslationUnit& tu,
                             const analysis::AnalysisOptions& options);

  // What the last build() did (a test hook and the bench's split).
  struct LastBuild {
    bool reused = false;              // the headers' bodies came from the cache
    size_t main_reused = 0;           // main-file definitions taken from the last walk
    size_t main_walked = 0;           // main-file definitions walked
    size_t main_implicit_reused = 0;  // main-file classes whose implicit members were taken
    size_t header_walked = 0;         // header definitions walked by this build
    size_t header_bodies = 0;         // header bodies the unit carries
    double key_ms = 0;                // computing the key (CPU time of the thread)
    bool inclusions_scanned = false;  // libclang was asked for the inclusions
  };
  const LastBuild& last() const { return last_; }

  // The key of `tu`'s header context (see the file comment) from a fresh scan of its
  // inclusions; nullopt when it cannot be known (no translation unit), which never matches.
  static std::optional<uint64_t> contextKey(const analysis::TranslationUnit& tu,
                                            const std::string& workspace_root);

 private:
  std::optional<uint64_t> key_;
  HeaderContext context_;
  std::unordered_map<std::string, analysis::FunctionInfo> bodies_;
  std::vector<analysis::ParseProblem> problems_;
  analysis::MainBodies main_;
  // Per node of the lent unit's functions, in order: its call.in_workspace as walked.
  std::vector<bool> walked_in_workspace_;
  void restoreWalkedMarks(std::vector<analysis::FunctionInfo>& functions) const;
  LastBuild last_;

  void drop() noexcept;  // nothing of the main file kept: its next build walks every body
};

}  // namespace perfhat::server
