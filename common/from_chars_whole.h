// Reading a whole string as one number with std::from_chars (no locale, no leading spaces or
// '+', no trailing text), as the wire formats want it.
#pragma once

#include <charconv>
#include <string_view>

namespace perfhat {

// True when all of `text` is one T (empty text, trailing characters or a value out of T's range
// are false), which is then in `out`. On false `out` is unspecified: trailing characters leave the
// leading number's value in it, as std::from_chars does; callers must not read it.
template <class T>
bool fromCharsWhole(std::string_view text, T& out) {
  const char* end = text.data() + text.size();
  const auto [p, ec] = std::from_chars(text.data(), end, out);
  return ec == std::errc() && p == end;
}

}  // namespace perfhat
