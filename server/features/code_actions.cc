// textDocument/codeAction: what-if overrides and a way to the raw data.
//  * On a loop: "Set expected iterations…" writes `// perfhat: iterations=N` on the line above
//    the loop (N = the current estimate, for the user to edit); the analysis reads it back as
//    IterationSource::Annotation.
//  * On a node with production data: "Show production data" (command perfhat.showData).
#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include "server/analysis/annotation.h"
#include "server/features/feature_util.h"

namespace perfhat::features {
namespace {

using analysis::FunctionInfo;
using analysis::Node;
using analysis::NodeKind;

// Line `line` of `text` (0-based) without its line break; empty when out of range.
std::optional<std::string_view> lineOf(std::string_view text, int line) {
  if (line < 0) return std::nullopt;
  size_t start = 0;
  for (int i = 0; i < line; ++i) {
    const size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) return std::nullopt;
    start = nl + 1;
  }
  size_t end = text.find('\n', start);
  if (end == std::string_view::npos) end = text.size();
  std::string_view l = text.substr(start, end - start);
  if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
  return l;
}

CodeAction iterationsAction(const Node& loop, std::string_view text) {
  const int line = loop.range.start.line;
  const long n = loop.loop.iterations ? std::lround(std::max(1.0, *loop.loop.iterations)) : 1;
  std::string indent(static_cast<size_t>(std::max(0, loop.range.start.column)), ' ');
  if (const auto l = lineOf(text, line)) {
    indent = std::string(l->substr(0, l->find_first_not_of(" \t")));
  }
  const std::string comment = indent + analysis::iterationsAnnotationText(n);

  CodeAction a;
  a.kind = "refactor";
  a.title = "Set expected iterations… (now " +
            (loop.loop.iterations ? formatCount(*loop.loop.iterations) + ", " +
                                        detail::iterationSourceText(loop.loop.iteration_source)
                                  : std::string("unknown")) +
            ")";
  TextEdit e;
  const auto above = lineOf(text, line - 1);
  const auto annotation = above ? analysis::parseIterationsAnnotation(*above) : std::nullopt;
  if (annotation && annotation->alone) {  // the analysis reads it for this loop: replace it
    e.range = {{line - 1, 0}, {line - 1, static_cast<int>(above->size())}};
    e.new_text = comment;
  } else if (text.empty() && line > 0 &&
             loop.loop.iteration_source == analysis::IterationSource::Annotation) {
    // No text to check: trust the snapshot that the annotation is the line above.
    e.range = {{line - 1, 0}, {line, 0}};
    e.new_text = comment + "\n";
  } else {
    e.range = {{line, 0}, {line, 0}};
    e.new_text = comment + "\n";
  }
  a.edits.push_back(e);
  return a;
}

// The key and arguments perfhat.showData takes for a node, or empty when it has no data.
std::vector<std::string> dataArguments(const FunctionInfo& f, const Node& n) {
  if (n.kind == NodeKind::Loop &&
      n.loop.iteration_source == analysis::IterationSource::Production) {
    return {f.key, "loop", std::to_string(n.loop.ordinal)};
  }
  if (!n.measured || n.measured->count == 0) return {};
  if (n.kind == NodeKind::Function) return {f.key};
  if (n.kind == NodeKind::Call) return {n.call.key.empty() ? n.call.mangled : n.call.key};
  return {};
}

}  // namespace

std::vector<CodeAction> codeActions(const Snapshot& s, const Range& range, const Options& o) {
  return codeActions(s, range, o, std::string_view());
}

std::vector<CodeAction> codeActions(const Snapshot& s, const Range& range, const Options& o,
                                    std::string_view text) {
  (void)o;
  std::vector<CodeAction> out;
  const detail::Located at = detail::locate(s, range.start);
  if (!at.node) return out;
  const FunctionInfo& f = *at.function;

  // The node itself and everything enclosing it, innermost first.
  std::vector<const Node*> chain = {at.node};
  for (const Node* a : detail::ancestors(f, *at.node)) chain.push_back(a);

  for (const Node* n : chain) {
    if (n->kind == NodeKind::Loop) {
      out.push_back(iterationsAction(*n, text));
      break;
    }
  }
  // Raw data: the innermost node that has some, and the function's own when different.
  bool inner_done = false;
  for (const Node* n : chain) {
    const std::vector<std::string> args = dataArguments(f, *n);
    if (args.empty() || args.front().empty()) continue;
    if (inner_done && n->kind != NodeKind::Function) continue;
    CodeAction a;
    a.kind = "quickfix";
    a.title = "Show production data: " + detail::displayName(f, *n);
    a.command = "perfhat.showData";
    a.arguments = args;
    out.push_back(a);
    inner_done = true;
  }
  return out;
}

}  // namespace perfhat::features
