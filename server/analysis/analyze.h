// The top-level pure function of the analysis: parsed document + feedback + options → an
// immutable Snapshot (DESIGN §6). No I/O: the server fetches referencedKeys() in one bulk
// request first and passes the result as the FeedbackView.
//
//   auto tu = TranslationUnit::parse(path, text, compileCommandFor(path, ...).args).value;
//   ParsedUnit unit = buildAst(*tu, options);
//   InMemoryFeedback view = fetch(referencedKeys(unit));   // server/feedback
//   SnapshotPtr snap = analyze(unit, view, options, version);
#pragma once

#include "server/analysis/ast_builder.h"
#include "server/analysis/feedback_view.h"
#include "server/analysis/options.h"
#include "server/analysis/snapshot.h"
#include "server/analysis/translation_unit.h"

namespace perfhat::analysis {

// Specification + inference over an already built AST. Snapshot::analysis_ms covers the AST
// walk (unit.build_ms) plus this call; parse_ms is the TU's last (re)parse.
SnapshotPtr analyze(const ParsedUnit& unit, const FeedbackView& feedback,
                    const AnalysisOptions& options, int version = 0);

// The text production ran for the same file (DESIGN §10, "What production ran"), parsed, and the
// revision it came from: changed functions are predicted as measured − removed + added, and a
// function identical to it is measured as is.
struct DeployedUnit {
  const ParsedUnit* unit = nullptr;
  std::string revision;
};
SnapshotPtr analyze(const ParsedUnit& unit, const FeedbackView& feedback,
                    const AnalysisOptions& options, int version, const DeployedUnit& deployed);
// The same, as a snapshot its caller still fills in (the server's fetch time and changed
// callees) before sharing it: a copy of a large file's snapshot costs as much as a fifth of its
// inference.
std::shared_ptr<Snapshot> analyzeOwned(const ParsedUnit& unit, const FeedbackView& feedback,
                                       const AnalysisOptions& options, int version,
                                       const DeployedUnit& deployed);

// A snapshot of `unit` with no function yet: path, version, parse problems and the feedback's
// staleness, as every analysis starts it.
std::shared_ptr<Snapshot> newSnapshot(const ParsedUnit& unit, const FeedbackView& feedback,
                                      int version);

// buildAst + analyze in one call.
SnapshotPtr analyze(const TranslationUnit& tu, const FeedbackView& feedback,
                    const AnalysisOptions& options, int version = 0);

}  // namespace perfhat::analysis
