#include "common/result.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <string>

#include "common/from_chars_whole.h"

namespace perfhat {

Result<unsigned long long> parseUnsigned(std::string_view text) {
  unsigned long long v = 0;
  if (!fromCharsWhole(text, v)) {
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
