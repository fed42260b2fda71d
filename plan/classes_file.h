// Reading the event classes of `perfhat-plan budget --classes FILE.json`: an array (or
// {"classes": [...]}) of {"name", "frequency_hz", "duty_ratio", "weight", "min_rate_hz"}.
// Every problem is reported with the class and the field, so a hand-written file can be fixed.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "plan/budget.h"

namespace perfhat::plan {

// Bounds on what a class file may contain (beyond them the numbers are surely a mistake).
inline constexpr std::size_t kMaxClassFileBytes = 16 << 20;
inline constexpr std::size_t kMaxClasses = 10'000;
inline constexpr std::size_t kMaxClassNameBytes = 512;
inline constexpr double kMaxFrequencyHz = 1e9;  // a billion events per second per class
inline constexpr double kMaxWeight = 1e9;

struct ClassFile {
  std::vector<EventClass> classes;
  std::string error;  // empty when the file was read
  bool ok() const { return error.empty(); }
};

ClassFile parseClassFile(std::string_view text);
ClassFile readClassFile(const std::string& path);

}  // namespace perfhat::plan
