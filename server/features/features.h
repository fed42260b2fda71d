// Editor features as pure functions over an analysis snapshot (clangd style). Each returns
// structured results; server/lsp/ renders them as LSP JSON and `--check` renders them as text.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/analysis/snapshot.h"

namespace perfhat::features {

using analysis::Position;
using analysis::Range;
using analysis::Snapshot;

// Usage profiles (paper's future work): `design` shows few, coarse hints (function totals,
// loops, anything predicted or above the hotspot threshold); `debug` shows everything.
enum class Profile { Design, Debug };

struct Options {
  Profile profile = Profile::Debug;
  // Regression diagnostic: warn when the predicted function latency exceeds the measured one
  // by more than BOTH the relative and the absolute threshold.
  double regression_relative = 0.20;    // +20 %
  double regression_absolute_ns = 1e6;  // +1 ms
  // Learn per-function thresholds from production data: a change within twice the standard
  // error of the measured statistic (from the p90/p50 spread and the call count) is noise.
  bool learn_thresholds = true;
  // Cap on that noise allowance, so a very noisy function still gets warnings for predictions
  // several times its usual latency.
  double learned_relative_max = 2.0;  // noise allowance at most +200 % of the measured value
  // Information diagnostics for hotspots (calls/loops above this share of the function total).
  bool hotspot_diagnostics = false;
  double hotspot_share = 0.5;
  // `design` profile: calls and branches show only when they take at least this share of their
  // function's total (function totals, loops and predicted calls always show).
  double design_min_share = 0.1;
  // Which percentile labels show ("p50" or "mean" as the main figure; "p90" and "p99" work too).
  std::string main_statistic = "p50";
};

enum class HintKind { Measured, Predicted, Unknown };

struct InlayHint {
  Position position;
  std::string label;    // "⏱ 12.4 ms", "≈ 1.24 s (100 × 12.4 ms)", "~⏱ 3.0 ms", "⏱ ?"
  std::string tooltip;  // plain text, one or two lines
  HintKind kind = HintKind::Measured;
  bool padding_left = true;
};

struct HoverResult {
  Range range;
  std::string markdown;
};

struct CodeLens {
  Range range;
  std::string title;    // "prod p50 3.1 ms · p99 12 ms · 1.2k calls/min"
  std::string command;  // executeCommand id ("perfhat.showData" ...) or "" for display only
  std::vector<std::string> arguments;
};

enum class Severity { Error = 1, Warning = 2, Information = 3, Hint = 4 };

struct Diagnostic {
  Range range;
  Severity severity = Severity::Warning;
  std::string code;  // "perfhat.regression", "perfhat.hotspot", "perfhat.parse"
  std::string message;
};

struct TextEdit {
  Range range;
  std::string new_text;
};

struct CodeAction {
  std::string title;
  std::string kind;             // "quickfix", "refactor"
  std::vector<TextEdit> edits;  // applied to the snapshot's document
  std::string command;          // or a command to run
  std::vector<std::string> arguments;
};

// Hints whose position lies in `range` (the request's range; DESIGN §6).
std::vector<InlayHint> inlayHints(const Snapshot& s, const Range& range, const Options& o);
std::optional<HoverResult> hover(const Snapshot& s, Position p, const Options& o);
std::vector<CodeLens> codeLenses(const Snapshot& s, const Options& o);
std::vector<Diagnostic> diagnostics(const Snapshot& s, const Options& o);
// Actions for a cursor/range: set expected iterations of a loop, open the raw data.
std::vector<CodeAction> codeActions(const Snapshot& s, const Range& range, const Options& o);
// Same, with the document text the snapshot was built from: the iterations edit then updates an
// existing `// perfhat: iterations=N` line in place and copies the loop's indentation exactly
// (tabs included). Without the text it assumes an annotation sits on the line above when the
// snapshot says the count came from one, and indents with spaces.
std::vector<CodeAction> codeActions(const Snapshot& s, const Range& range, const Options& o,
                                    std::string_view text);

// Formatting used by every feature, so the editor and --check print the same figures.
std::string formatDuration(double ns);  // "850 ns", "12.4 ms", "1.24 s"
std::string formatCount(double n);      // "950", "1.2k", "3.4M"
// A range of durations: "18.0–31.2 ms", "850 µs–1.20 ms" (the unit once when both share it).
std::string formatDurationRange(double lo_ns, double hi_ns);
// Signed relative change: "+820 %", "-12 %", "+4.5 %".
std::string formatPercent(double fraction);

}  // namespace perfhat::features
