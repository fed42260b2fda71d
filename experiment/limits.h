// Bounds on what perfhat-experiment reads, in one place: a hostile or mistaken file gets a clear
// error instead of unbounded memory or time.
#pragma once

#include <cstddef>

namespace perfhat::experiment {

inline constexpr size_t kMaxInputBytes = 16u << 20;  // a CSV or study file; a real study is KBs
inline constexpr size_t kMaxCsvRows = 200000;
inline constexpr size_t kMaxFieldChars = 256;
inline constexpr size_t kMinGroupValues = 3;  // Shapiro-Wilk's minimum
inline constexpr size_t kMaxParticipants = 10000;

}  // namespace perfhat::experiment
