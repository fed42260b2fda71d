#include "server/analysis/analyze.h"

#include <chrono>

#include "server/analysis/inference.h"

namespace perfhat::analysis {

SnapshotPtr analyze(const ParsedUnit& unit, const FeedbackView& feedback,
                    const AnalysisOptions& options, int version) {
  return analyze(unit, feedback, options, version, DeployedUnit{});
}

SnapshotPtr analyze(const ParsedUnit& unit, const FeedbackView& feedback,
                    const AnalysisOptions& options, int version, const DeployedUnit& deployed) {
  return analyzeOwned(unit, feedback, options, version, deployed);
}

std::shared_ptr<Snapshot> newSnapshot(const ParsedUnit& unit, const FeedbackView& feedback,
                                      int version) {
  auto snap = std::make_shared<Snapshot>();
  snap->path = unit.path;
  snap->version = version;
  snap->problems = unit.problems;
  snap->stale = feedback.stale();
  snap->parse_ms = unit.parse_ms;
  return snap;
}

std::shared_ptr<Snapshot> analyzeOwned(const ParsedUnit& unit, const FeedbackView& feedback,
                                       const AnalysisOptions& options, int version,
                                       const DeployedUnit& deployed) {
  auto t0 = std::chrono::steady_clock::now();
  std::shared_ptr<Snapshot> snap = newSnapshot(unit, feedback, version);
  Inference inference(unit, feedback, options, deployed.unit, deployed.revision);
  snap->functions.reserve(unit.functions.size());
  for (const auto& fn : unit.functions) {
    FunctionInfo analysed = inference.analyzeFunction(fn);
    // A compiler-defined member is shown only where production ran it (ast_builder.cc).
    if (analysed.implicit && analysed.match == MatchKind::None) continue;
    snap->functions.push_back(std::move(analysed));
  }
  snap->analysis_ms =
      unit.build_ms +
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return snap;
}

SnapshotPtr analyze(const TranslationUnit& tu, const FeedbackView& feedback,
                    const AnalysisOptions& options, int version) {
  return analyze(buildAst(tu, options), feedback, options, version);
}

}  // namespace perfhat::analysis
