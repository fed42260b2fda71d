#include "server/features/annotate.h"

#include <algorithm>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "server/features/feature_util.h"
#include "server/features/hint_text.h"

namespace perfhat::features {
namespace {

constexpr const char* kReset = "\x1b[0m";

const char* hintColor(HintKind k) {
  switch (k) {
    case HintKind::Measured:
      return "\x1b[36m";
    case HintKind::Predicted:
      return "\x1b[33m";
    case HintKind::Unknown:
      return "\x1b[90m";
  }
  return "";
}

const char* severityColor(Severity s) {
  switch (s) {
    case Severity::Error:
      return "\x1b[1;31m";
    case Severity::Warning:
      return "\x1b[1;33m";
    case Severity::Information:
      return "\x1b[1;34m";
    case Severity::Hint:
      return "\x1b[2m";
  }
  return "";
}

const char* severityName(Severity s) {
  switch (s) {
    case Severity::Error:
      return "error";
    case Severity::Warning:
      return "warning";
    case Severity::Information:
      return "info";
    case Severity::Hint:
      return "hint";
  }
  return "note";
}

std::vector<std::string_view> splitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view l = text.substr(start, nl - start);
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    lines.push_back(l);
    start = nl + 1;
  }
  return lines;
}

std::string leadingWhitespace(std::string_view line) {
  return std::string(line.substr(0, std::min(line.size(), line.find_first_not_of(" \t"))));
}

// Blank space as wide on screen as line[0, bytes): tabs stay tabs, UTF-8 sequences count once.
std::string padTo(std::string_view line, int bytes) {
  std::string pad;
  for (int i = 0; i < bytes; ++i) {
    // Past the end and a character's first byte both pad with a space, as separate cases.
    // NOLINTNEXTLINE(bugprone-branch-clone)
    if (i >= static_cast<int>(line.size())) {
      pad += ' ';
    } else if (line[i] == '\t') {
      pad += '\t';
    } else if ((static_cast<unsigned char>(line[i]) & 0xC0) != 0x80) {
      pad += ' ';
    }
  }
  return pad;
}

// Characters (not bytes) in line[from, to).
int charsBetween(std::string_view line, int from, int to) {
  int n = 0;
  for (int i = std::max(0, from); i < to && i < static_cast<int>(line.size()); ++i) {
    if ((static_cast<unsigned char>(line[i]) & 0xC0) != 0x80) ++n;
  }
  return n;
}

struct LineHint {
  analysis::Position position;
  std::string text;
  HintKind kind;
};

}  // namespace

std::string annotateSource(const std::string& text, const Snapshot& s, const Options& o,
                           bool color) {
  const std::vector<std::string_view> lines = splitLines(text);
  const int last = static_cast<int>(lines.size()) - 1;
  auto paint = [&](const char* c, const std::string& t) {
    return color ? std::string(c) + t + kReset : t;
  };

  // Hints per line, from the same functions textDocument/inlayHint uses.
  std::map<int, std::vector<LineHint>> hints;
  std::map<int, std::vector<std::pair<const analysis::FunctionInfo*, const analysis::Node*>>>
      nodes_on_line;
  for (const analysis::FunctionInfo& f : s.functions) {
    for (const analysis::Node& n : f.nodes) {
      if (detail::profileShows(f, n, o))
        nodes_on_line[std::min(n.hint.line, last)].push_back({&f, &n});
    }
  }
  for (auto& [line, list] : nodes_on_line) {
    std::stable_sort(list.begin(), list.end(),
                     [](const auto& a, const auto& b) { return a.second->hint < b.second->hint; });
    for (const auto& [f, n] : list) {
      const detail::HintText t = detail::hintText(s, *f, *n, o);
      std::string label = t.label;
      if (list.size() > 1 && n->kind == analysis::NodeKind::Call) {
        label.insert(0, detail::displayName(*f, *n) + " ");
      }
      hints[line].push_back({n->hint, label, t.kind});
    }
  }

  std::map<int, std::vector<CodeLens>> lenses;
  for (const CodeLens& l : codeLenses(s, o)) {
    lenses[std::clamp(l.range.start.line, 0, std::max(0, last))].push_back(l);
  }
  std::map<int, std::vector<Diagnostic>> diags;
  for (const Diagnostic& d : diagnostics(s, o)) {
    diags[std::clamp(d.range.start.line, 0, std::max(0, last))].push_back(d);
  }

  std::string out;
  for (int i = 0; i <= last || (i == 0 && (lenses.count(0) || diags.count(0))); ++i) {
    const std::string_view line = i <= last ? lines[i] : std::string_view();
    if (auto it = lenses.find(i); it != lenses.end()) {
      std::string titles;
      for (const CodeLens& l : it->second) titles += (titles.empty() ? "" : "  │  ") + l.title;
      out += leadingWhitespace(line) + paint("\x1b[2;34m", "▸ " + titles) + "\n";
    }
    out += line;
    if (auto it = hints.find(i); it != hints.end()) {
      out += "   ";
      for (size_t k = 0; k < it->second.size(); ++k) {
        out += (k ? "  " : "") + paint(hintColor(it->second[k].kind), it->second[k].text);
      }
    }
    out += "\n";
    if (auto it = diags.find(i); it != diags.end()) {
      for (const Diagnostic& d : it->second) {
        const int from = d.range.start.column;
        const int to = d.range.end.line == d.range.start.line ? d.range.end.column
                                                              : static_cast<int>(line.size());
        const int width = std::max(1, charsBetween(line, from, to));
        out += padTo(line, from) +
               paint(severityColor(d.severity), std::string("^") + std::string(width - 1, '~') +
                                                    " " + severityName(d.severity) + " " + d.code +
                                                    ": " + d.message) +
               "\n";
      }
    }
  }
  return out;
}

}  // namespace perfhat::features
