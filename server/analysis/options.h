// Tunables of the analysis (specification + inference), with safe defaults in one struct.
// Read from the `analysis` object of `.perfhat.json` by the server; to_json/from_json beside it.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "common/result.h"

namespace re2 {
class RE2;
}

namespace perfhat::analysis {

enum class BranchMode {
  Mean,   // arms weighted equally (stated as an assumption): expected cost
  Worst,  // the most expensive arm: an upper bound
};

// A user rule of the specification (DESIGN §3): production data recorded under `span` (an OTel
// span name such as "GET /tasks", or any key) belongs to a function. The function is named by
// its key, by a key whose parameter list is `(...)` (any overload), or by a regular expression
// over keys (`function_regex`, RE2 syntax, whole-key match).
struct MatchRule {
  std::string span;
  std::string function;
  std::string function_regex;
  bool operator==(const MatchRule&) const = default;

  // RE2 compiles and matches in linear time without recursion, so neither pattern nor key needs
  // a length cap; the memory one compiled pattern may take is bounded instead (RE2's own default,
  // far above any hand-written pattern). A pattern over it is refused with RE2's error.
  static constexpr int64_t kMaxRegexMemory = 8 << 20;
};

// `pattern` compiled as a `function_regex` (RE2, UTF-8, bounded by MatchRule::kMaxRegexMemory),
// or RE2's reason it is not one (e.g. "invalid escape sequence: \\1" for a back-reference, which
// RE2 does not support).
Result<std::shared_ptr<const re2::RE2>> compileFunctionRegex(const std::string& pattern);

struct AnalysisOptions {
  // Loop iterations assumed when neither production data, a producer's result size, a constant
  // trip count nor an annotation says otherwise (flagged as an assumption).
  double default_loop_iterations = 10;
  BranchMode branch_mode = BranchMode::Mean;
  std::vector<MatchRule> rules;
  // Functions defined under this directory are "in the workspace": their bodies are analysed
  // when they have no production data. Empty: only the file being analysed.
  std::string workspace_root;
  // Flags used when no compile_commands.json covers a file (the file's directory is added as
  // an include path).
  std::vector<std::string> fallback_flags = {"-std=c++20", "-xc++"};
  // A directory or file holding compile_commands.json; empty: search upward from the file.
  std::string compile_commands;
  // Whether `do { … } while (0)` loops (macro idiom) become loop nodes.
  bool show_do_while_zero = false;
  // The AST walk recurses once per structural nesting level (an else-if chain of N branches is N
  // levels). Deeper code is not analysed and the snapshot says so (a warning); the server runs
  // analysis on a large stack (server/server/large_stack_thread.h) sized for this depth.
  int max_nesting_depth = 10'000;
  // Callees without production data are analysed from their bodies, recursively: a generated
  // call chain f0 → f1 → … is cut here (the rest is unknown, and the hover says why).
  int max_body_depth = 256;
  // The revision production ran (DESIGN §10, "What production ran"): empty takes it from the
  // feedback (a service.version naming a commit of the workspace's git), "none" turns the
  // comparison off, anything else is a commit to compare against.
  std::string deployed_revision;
  // Assumption ranges, for the intervals on predictions: what an assumed factor may really be.
  // A default loop count lies between default_iterations_low and default_iterations_high times
  // the default; a branch taken with a static prior p between p·branch_prior_low and
  // min(1, p·branch_prior_high); a container bounded by its insertions holds between
  // dataflow_low times and all of them (duplicates dropped). z: the normal quantile of the range
  // (1.2816: p10–p90) applied to standard errors of measurements.
  double default_iterations_low = 0.1;
  double default_iterations_high = 3;
  double branch_prior_low = 0.5;
  double branch_prior_high = 2;
  double dataflow_low = 0.5;
  // A callee whose result sizes' p90 lies within this factor of their mean saw one kind of input;
  // costed for a caller production did not measure it from, its range reaches down to one
  // element's share of its cost (the data cannot show how the cost follows the input).
  double one_input_size_spread = 1.25;
  double interval_z = 1.2816;
  // Run-to-run drift: how far a function's measured value may move between two deployments of
  // the same code (machine load, data, neighbours), as a share of the prediction; the interval is
  // widened by it on both sides. The feedback shows it directly when it holds a baseline window
  // of the function (the share by which its mean moved between the windows, used when larger).
  // Default 0.10: on the accuracy study's development set, unchanged functions measured in two
  // runs moved by 2–11 % at the p50 on a shared, loaded machine.
  double drift_share = 0.10;
  // A callee's cost depends on the caller's context when a call in its body has a bimodal
  // production distribution (a lazily loaded or cached value: fast when loaded, slow when it
  // loads): its p90 (or p99) at least this many times its p50. A new call of such a callee gets
  // the slow outcome as the top of its range.
  double context_bimodal_ratio = 10;
  bool operator==(const AnalysisOptions&) const = default;
};

class OptionsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

void to_json(nlohmann::json& j, const MatchRule& v);
void from_json(const nlohmann::json& j, MatchRule& v);
void to_json(nlohmann::json& j, const AnalysisOptions& v);
void from_json(const nlohmann::json& j, AnalysisOptions& v);

// Parses options from JSON text; missing fields keep their defaults. Throws OptionsError with a
// message naming the offending field (malformed JSON, wrong type, invalid regex, iterations ≤ 0).
AnalysisOptions parseAnalysisOptions(std::string_view text);

}  // namespace perfhat::analysis
