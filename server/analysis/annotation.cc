#include "server/analysis/annotation.h"

#include <charconv>
#include <cmath>

namespace perfhat::analysis {
namespace {

constexpr std::string_view kTag = "perfhat:";

bool isSpace(char c) {
  return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r' || c == '\n';
}
bool isDigit(char c) { return c >= '0' && c <= '9'; }

void skipSpaces(std::string_view s, size_t& i) {
  while (i < s.size() && isSpace(s[i])) ++i;
}
bool expect(std::string_view s, size_t& i, std::string_view word) {
  if (s.substr(i, word.size()) != word) return false;
  i += word.size();
  return true;
}
size_t digitsAt(std::string_view s, size_t i) {
  size_t n = 0;
  while (i + n < s.size() && isDigit(s[i + n])) ++n;
  return n;
}

// `ws* "iterations" ws* "=" ws* number` at the start of `s`; trailing text is ignored.
std::optional<double> valueAfterTag(std::string_view s) {
  size_t i = 0;
  skipSpaces(s, i);
  if (!expect(s, i, "iterations")) return std::nullopt;
  skipSpaces(s, i);
  if (!expect(s, i, "=")) return std::nullopt;
  skipSpaces(s, i);
  const size_t begin = i;
  size_t n = digitsAt(s, i);
  if (n == 0) return std::nullopt;
  i += n;
  if (i < s.size() && s[i] == '.' && (n = digitsAt(s, i + 1)) > 0) i += 1 + n;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E') && (n = digitsAt(s, i + 1)) > 0) i += 1 + n;
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data() + begin, s.data() + i, v);
  if (ec != std::errc() || end != s.data() + i || !std::isfinite(v)) return std::nullopt;
  return v;
}

}  // namespace

std::optional<IterationsAnnotation> parseIterationsAnnotation(std::string_view line) {
  const size_t comment = line.find("//");
  if (comment == std::string_view::npos) return std::nullopt;
  for (size_t at = line.find(kTag, comment + 2); at != std::string_view::npos;
       at = line.find(kTag, at + 1)) {
    if (const auto v = valueAfterTag(line.substr(at + kTag.size()))) {
      return IterationsAnnotation{*v, line.find_first_not_of(" \t") == comment};
    }
  }
  return std::nullopt;
}

std::string iterationsAnnotationText(long iterations) {
  return "// perfhat: iterations=" + std::to_string(iterations);
}

}  // namespace perfhat::analysis
