#include "server/analysis/inference_reuse.h"

#include <algorithm>
#include <chrono>
#include <string_view>
#include <unordered_set>

#include "server/analysis/analyze.h"
#include "server/analysis/inference.h"

namespace perfhat::analysis {
namespace {

// The keys a function's analysis may look up a body for: its calls' callees and the producers
// of the collections it loops over.
template <typename Visit>
void keysLookedUp(const FunctionInfo& f, Visit&& visit) {
  for (const Node& n : f.nodes) {
    if (!n.call.key.empty()) visit(std::string_view(n.call.key));
    if (!n.loop.producer_key.empty()) visit(std::string_view(n.loop.producer_key));
  }
}

// Keys as views of the unit's and the last results' strings, which outlive the graph: no copy
// per key.
using KeySet = std::unordered_set<std::string_view>;

// The bodies the analysis reaches from a key, as the inference looks them up (the document's
// own definitions over the workspace's), and what each key reaches: a changed key, a cycle, and
// how deep the calls go.
class CallGraph {
 public:
  struct Reach {
    bool changed = false;
    bool recursive = false;  // on a cycle or reaching one
    int height = 0;          // the longest chain of bodies below
  };
  CallGraph(const ParsedUnit& unit, const KeySet& changed, int limit)
      : changed_(changed), limit_(limit) {
    bodies_.reserve(unit.workspace_bodies.size() + unit.functions.size());
    for (const auto& [key, f] : unit.workspace_bodies) bodies_.emplace(key, &f);
    for (const auto& f : unit.functions) bodies_[f.key] = &f;
  }
  // What `f`'s analysis reaches (`f` itself being analysed, so a call of its own key is a cycle).
  Reach ofFunction(const FunctionInfo& f) {
    Reach r = of(f.key, 0);
    keysLookedUp(f, [&](std::string_view k) {
      r.recursive = r.recursive || k == f.key;
      add(r, of(k, 1));
    });
    return r;
  }
  bool tooDeep() const { return too_deep_; }

 private:
  static void add(Reach& into, const Reach& r) {
    into.changed = into.changed || r.changed;
    into.recursive = into.recursive || r.recursive;
    into.height = std::max(into.height, r.height + 1);
  }
  Reach of(std::string_view key, int depth) {
    State& s = state_[key];  // node-based map: the reference survives insertions below
    if (s.color == kDone) {
      // Reached deeper than before: the chain below may now reach the inference's limit.
      if (depth + s.reach.height > limit_) too_deep_ = true;
      return s.reach;
    }
    if (s.color == kOnStack) return Reach{false, true, 0};  // a cycle back to `key`
    s.color = kOnStack;
    Reach r;
    r.changed = changed_.count(key) > 0;
    if (depth > limit_) {
      too_deep_ = true;
    } else if (auto it = bodies_.find(key); it != bodies_.end()) {
      keysLookedUp(*it->second, [&](std::string_view k) { add(r, of(k, depth + 1)); });
    }
    s.color = kDone;
    s.reach = r;
    return r;
  }
  enum Color { kNew, kOnStack, kDone };
  struct State {
    Color color = kNew;
    Reach reach;
  };
  const KeySet& changed_;
  const int limit_;
  std::unordered_map<std::string_view, const FunctionInfo*> bodies_;
  std::unordered_map<std::string_view, State> state_;
  bool too_deep_ = false;
};

bool sameFeedback(const FeedbackView& view, const std::vector<FeedbackItem>& last) {
  const std::vector<const FeedbackItem*> now = view.all();
  return std::equal(now.begin(), now.end(), last.begin(), last.end(),
                    [](const FeedbackItem* a, const FeedbackItem& b) { return *a == b; });
}

// A margin below the inference's own limit: a chain that deep is cut by where it began.
int graphLimit(const AnalysisOptions& options) { return std::max(0, options.max_body_depth - 4); }

}  // namespace

NoReuse InferenceReuse::whyNoReuse(const ParsedUnit& unit, const AnalysisOptions& options,
                                   const DeployedUnit& deployed, const ReuseContext& context,
                                   bool feedback_same) const {
  if (!valid_) return not_kept_because_;
  if (deployed.unit) return NoReuse::DeployedText;
  if (unit.same_as_last.size() != unit.functions.size()) return NoReuse::WalkReusedNothing;
  if (!context.workspace_same) return NoReuse::OtherWorkspaceBodies;
  if (!(options == options_)) return NoReuse::OtherOptions;
  if (unit.problems != problems_) return NoReuse::OtherParseProblems;
  if (!feedback_same) return NoReuse::OtherFeedback;
  return NoReuse::None;
}

bool InferenceReuse::reachesDepthLimit(const ParsedUnit& unit, const AnalysisOptions& options) {
  const KeySet none;
  CallGraph graph(unit, none, graphLimit(options));
  for (const FunctionInfo& f : unit.functions) graph.ofFunction(f);
  return graph.tooDeep();
}

std::vector<long> InferenceReuse::reusable(const ParsedUnit& unit, const AnalysisOptions& options,
                                           bool* too_deep) const {
  // Each function's last result, when the walk says it is the same function at the same place.
  const size_t n = unit.functions.size();
  std::vector<long> from(n, -1);
  std::vector<bool> matched(results_.size(), false);
  for (size_t i = 0; i < n; ++i) {
    if (!unit.same_as_last[i]) continue;
    const FunctionInfo& f = unit.functions[i];
    auto it = by_key_.find(f.key);
    if (it == by_key_.end()) continue;
    for (size_t j : it->second)
      if (!matched[j] && results_[j].range == f.range) {
        from[i] = static_cast<long>(j);
        matched[j] = true;
        break;
      }
  }
  // Changed keys: walked again, added, moved, or gone.
  KeySet changed;
  for (size_t i = 0; i < n; ++i)
    if (from[i] < 0) changed.insert(unit.functions[i].key);
  for (size_t j = 0; j < results_.size(); ++j)
    if (!matched[j]) changed.insert(results_[j].key);
  CallGraph graph(unit, changed, graphLimit(options));
  // Every function, the ones analysed again too: a chain cut at the depth limit anywhere makes
  // the memoized bodies along it depend on where it began.
  for (size_t i = 0; i < n; ++i) {
    const CallGraph::Reach r = graph.ofFunction(unit.functions[i]);
    if (r.changed || r.recursive) from[i] = -1;
  }
  *too_deep = graph.tooDeep();
  if (*too_deep) std::fill(from.begin(), from.end(), -1);
  return from;
}

std::shared_ptr<Snapshot> InferenceReuse::analyze(const ParsedUnit& unit,
                                                  const FeedbackView& feedback,
                                                  const AnalysisOptions& options, int version,
                                                  const DeployedUnit& deployed,
                                                  const ReuseContext& context) {
  auto t0 = std::chrono::steady_clock::now();
  last_ = Last{};
  const bool feedback_same = feedback.stale() == stale_ && sameFeedback(feedback, feedback_);
  last_.all_analysed_because = whyNoReuse(unit, options, deployed, context, feedback_same);
  bool too_deep = false;
  std::vector<long> from;
  if (last_.all_analysed_because == NoReuse::None) {
    from = reusable(unit, options, &too_deep);
  } else {
    from.assign(unit.functions.size(), -1);
    // Its results are kept for the next build only if none of them depends on where a chain
    // was cut (a body memoized below a cut is reused by a shorter chain otherwise).
    too_deep = !deployed.unit && reachesDepthLimit(unit, options);
  }

  std::shared_ptr<Snapshot> snap = newSnapshot(unit, feedback, version);
  snap->functions.reserve(unit.functions.size());
  std::vector<Result> results(unit.functions.size());
  std::unique_ptr<Inference> inference;
  // The last results are moved out below: one that throws part-way keeps none of them.
  try {
    // In the document's order, as analyzeOwned: what the analysed functions memoize along the way
    // is then what a full analysis memoizes for them.
    for (size_t i = 0; i < unit.functions.size(); ++i) {
      const FunctionInfo& fn = unit.functions[i];
      Result& r = results[i];
      if (from[i] >= 0) {
        r = std::move(results_[from[i]]);
        ++last_.reused;
      } else {
        if (!inference)
          inference = std::make_unique<Inference>(unit, feedback, options, deployed.unit,
                                                  deployed.revision);
        r.key = fn.key;
        r.range = fn.range;
        r.analysed = std::make_shared<FunctionInfo>(inference->analyzeFunction(fn));
        // A compiler-defined member is shown only where production ran it (ast_builder.cc).
        r.kept = !(r.analysed->implicit && r.analysed->match == MatchKind::None);
        ++last_.analysed;
      }
      if (r.kept) snap->functions.push_back(r.analysed);  // shared, not copied
    }
    results_ = std::move(results);
    remember(unit, feedback, options, deployed, feedback_same, too_deep);
  } catch (...) {
    forget(NoReuse::LastStoppedPartWay);
    throw;
  }
  snap->analysis_ms =
      unit.build_ms +
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return snap;
}

void InferenceReuse::forget(NoReuse why) {
  valid_ = false;
  not_kept_because_ = why;
  results_ = {};
  by_key_ = {};
  feedback_ = {};  // sameFeedback() then compares with no feedback, and remember() fills it
  problems_ = {};
}

void InferenceReuse::remember(const ParsedUnit& unit, const FeedbackView& feedback,
                              const AnalysisOptions& options, const DeployedUnit& deployed,
                              bool feedback_same, bool too_deep) {
  by_key_.clear();
  for (size_t j = 0; j < results_.size(); ++j) by_key_[results_[j].key].push_back(j);
  valid_ = deployed.unit == nullptr && !too_deep;
  not_kept_because_ = deployed.unit ? NoReuse::DeployedText
                      : too_deep    ? NoReuse::LastReachedDepthLimit
                                    : NoReuse::None;
  if (!(options == options_)) options_ = options;
  problems_ = unit.problems;
  stale_ = feedback.stale();
  if (!feedback_same) {
    feedback_.clear();
    for (const FeedbackItem* item : feedback.all()) feedback_.push_back(*item);
  }
}

}  // namespace perfhat::analysis
