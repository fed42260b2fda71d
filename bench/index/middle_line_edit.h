// The edit the index benchmark's in-process runs repeat: a comment added in the file's middle
// line (odd edits) and removed again (even edits), so every reparse sees a changed buffer.
#pragma once

#include <algorithm>
#include <optional>
#include <string>

#include "server/index/indexer.h"

namespace perfhat::bench {

struct MiddleLineEdit {
  std::string original;  // the file as read
  std::string edited;    // with "/*x*/" at the start of its middle line
  int lines = 0;
};

inline std::optional<MiddleLineEdit> middleLineEdit(const std::string& file) {
  auto text = index::readFile(file);
  if (!text) return std::nullopt;
  MiddleLineEdit e{*text, *text, static_cast<int>(std::count(text->begin(), text->end(), '\n'))};
  size_t line_start = 0;
  for (int l = 0; l < e.lines / 2; ++l) line_start = text->find('\n', line_start) + 1;
  e.edited.insert(line_start, "/*x*/");
  return e;
}

}  // namespace perfhat::bench
