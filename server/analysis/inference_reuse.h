// The inference of an edited document, reusing the last analysis of the functions the edit
// cannot have changed (issue #25, "edits that feel instant"). The result is the snapshot
// analyzeOwned (analyze.h) gives for the same unit, function for function.
//
// A function's analysis is a function of its own tree, the feedback, the options, and the bodies
// of the keys it reaches through calls (memoized per analysis). So a function keeps its last
// result when all of these hold:
//  * the walk took it from the last build at the same place (ParsedUnit::same_as_last), so its
//    tree, ranges included, is the last build's;
//  * the feedback (every item, and whether it is stale), the options, the parse problems and
//    the workspace bodies (ReuseContext) are the last analysis';
//  * no key it reaches through calls, its own included, changed: no function with that key was
//    walked again, added, removed or moved (the bodies a call reaches are looked up by key);
//  * nothing it reaches is recursive: a body reached while another is being analysed is cut
//    there and memoized as cut, so what such a body costs depends on which function reached it
//    first. For the same reason, a call chain as deep as max_body_depth turns reuse off, and
//    an analysis where one is that deep is not kept for the next (bodies memoized below a
//    cut would be reused by a shorter chain).
// With a deployed text (analyze.h, DeployedUnit) everything is analysed again.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "server/analysis/analyze.h"

namespace perfhat::analysis {

// What the unit's workspace bodies were made from, as the caller knows it.
// Why an analysis reused no function's last result (None: it could reuse some). The server's
// log words for each are noReuseText() (server/server/clang_analyzer.h).
enum class NoReuse {
  None,
  NoEarlierAnalysis,
  DeployedText,
  WalkReusedNothing,
  OtherWorkspaceBodies,
  OtherOptions,
  OtherParseProblems,
  OtherFeedback,
  LastReachedDepthLimit,  // the last analysis was not kept: a chain reached the depth limit
  LastStoppedPartWay,     // the last analysis threw part-way
  UnitReleased,           // the document's translation unit was released (and its analysis)
};

struct ReuseContext {
  // unit.workspace_bodies are, to the node, those of the last analysis (the walk cache reused the
  // headers' bodies and the index added the same stored summaries).
  bool workspace_same = false;
};

class InferenceReuse {
 public:
  std::shared_ptr<Snapshot> analyze(const ParsedUnit& unit, const FeedbackView& feedback,
                                    const AnalysisOptions& options, int version,
                                    const DeployedUnit& deployed, const ReuseContext& context);

  // What the last analyze() did: functions whose result was reused and analysed, and when
  // nothing could be reused, why (None otherwise).
  struct Last {
    size_t reused = 0;
    size_t analysed = 0;
    NoReuse all_analysed_because = NoReuse::None;
  };
  const Last& last() const { return last_; }

  // Drops the last analysis and frees what it held: the next analyze() analyses everything,
  // `why` being what its last().all_analysed_because says.
  void forget(NoReuse why);

 private:
  // Why every function must be analysed again, or None when some may be reused.
  NoReuse whyNoReuse(const ParsedUnit& unit, const AnalysisOptions& options,
                     const DeployedUnit& deployed, const ReuseContext& context,
                     bool feedback_same) const;
  // Per function of `unit`: the index of its last result to reuse, or -1.
  // `too_deep`: a chain of calls reaches the depth limit (then nothing is reused).
  std::vector<long> reusable(const ParsedUnit& unit, const AnalysisOptions& options,
                             bool* too_deep) const;
  // Whether a chain of calls from some function of `unit` reaches the depth limit.
  static bool reachesDepthLimit(const ParsedUnit& unit, const AnalysisOptions& options);
  // Keeps this analysis for the next one, unless it had a deployed text or reached the depth
  // limit (what bodies below a cut memoized depends on where the chain began).
  void remember(const ParsedUnit& unit, const FeedbackView& feedback,
                const AnalysisOptions& options, const DeployedUnit& deployed, bool feedback_same,
                bool too_deep);

  struct Result {
    std::string key;
    Range range;
    bool kept = false;  // the snapshot has it (an implicit member production never ran has not)
    // Shared with the snapshots that hold it; never written once made.
    std::shared_ptr<const FunctionInfo> analysed;
  };
  bool valid_ = false;
  NoReuse not_kept_because_ = NoReuse::NoEarlierAnalysis;        // when !valid_
  std::vector<Result> results_;                                  // per function of the last unit
  std::unordered_map<std::string, std::vector<size_t>> by_key_;  // into results_
  AnalysisOptions options_;
  std::vector<FeedbackItem> feedback_;
  bool stale_ = false;
  std::vector<ParseProblem> problems_;
  Last last_;
};

}  // namespace perfhat::analysis
