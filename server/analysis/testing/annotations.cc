#include "server/analysis/testing/annotations.h"

#include <cctype>
#include <stdexcept>
#include <utility>

namespace perfhat::analysis::testing {

Annotations::Annotations(std::string_view text) {
  Position pos;
  std::vector<std::pair<std::string, Position>> open;  // pending `[[`
  auto readName = [&](size_t& i) {
    std::string name;
    while (i < text.size() && (std::isalnum(static_cast<unsigned char>(text[i])) || text[i] == '_'))
      name.push_back(text[i++]);
    return name;
  };
  for (size_t i = 0; i < text.size();) {
    if (text[i] == '$') {
      size_t j = i + 1;
      std::string name = readName(j);
      if (j < text.size() && text[j] == '^') {
        points_[name].push_back(pos);
        i = j + 1;
        continue;
      }
      if (text.substr(j, 2) == "[[") {
        open.emplace_back(name, pos);
        i = j + 2;
        continue;
      }
    }
    if (text[i] == '^') {
      points_[""].push_back(pos);
      ++i;
      continue;
    }
    if (text.substr(i, 2) == "[[") {
      open.emplace_back("", pos);
      i += 2;
      continue;
    }
    if (text.substr(i, 2) == "]]" && !open.empty()) {
      ranges_[open.back().first].push_back(Range{open.back().second, pos});
      open.pop_back();
      i += 2;
      continue;
    }
    code_.push_back(text[i]);
    if (text[i] == '\n') {
      ++pos.line;
      pos.column = 0;
    } else {
      ++pos.column;
    }
    ++i;
  }
  if (!open.empty()) throw std::invalid_argument("unterminated [[ in annotated source");
}

Position Annotations::point(const std::string& name) const {
  auto it = points_.find(name);
  if (it == points_.end() || it->second.size() != 1)
    throw std::out_of_range("no single point named '" + name + "'");
  return it->second.front();
}

Range Annotations::range(const std::string& name) const {
  auto r = ranges(name);
  if (r.size() != 1) throw std::out_of_range("no single range named '" + name + "'");
  return r.front();
}

std::vector<Range> Annotations::ranges(const std::string& name) const {
  auto it = ranges_.find(name);
  if (it == ranges_.end()) throw std::out_of_range("no range named '" + name + "'");
  return it->second;
}

}  // namespace perfhat::analysis::testing
