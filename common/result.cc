#include "common/result.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>

namespace perfhat {

Result<unsigned long long> parseUnsigned(std::string_view text) {
  unsigned long long v = 0;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || p != end) {
    return Result<unsigned long long>::failure("expects a whole number ≥ 0, got '" +
                                               std::string(text) + "'");
  }
  return Result<unsigned long long>::success(v);
}

Result<double> parseNonNegative(std::string_view text) {
  const std::string s(text);  // strtod needs a terminated string
  char* end = nullptr;
  const double d = s.empty() ? -1 : std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(d) || !(d >= 0) ||
      std::isspace(static_cast<unsigned char>(s[0]))) {
    return Result<double>::failure("expects a non-negative number, got '" + s + "'");
  }
  return Result<double>::success(d);
}

}  // namespace perfhat
