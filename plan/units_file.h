// The probe inventory of `perfhat-plan variants --units FILE`: one function key a line, exactly
// as perfhat keys functions (keys hold spaces, commas and parentheses, so a line is never split).
// Blank lines and lines starting with '#' are skipped; surrounding whitespace and a trailing CR
// are dropped; a repeated key counts once (first position kept).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace perfhat::plan {

inline constexpr std::size_t kMaxUnitsFileBytes = 64 << 20;
inline constexpr std::size_t kMaxUnitKeyBytes = 16 << 10;

struct UnitsFile {
  std::vector<std::string> units;  // inventory order: the order of the file
  std::string error;
  bool ok() const { return error.empty(); }
};

UnitsFile parseUnits(std::string_view text);
UnitsFile readUnitsFile(const std::string& path);

}  // namespace perfhat::plan
