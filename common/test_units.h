#pragma once
// Durations are nanoseconds throughout perfhat (feedback, estimates, budgets); tests write their
// figures in milliseconds with this one constant. A using-declaration (not a definition of their
// own) lets several test files share a translation unit in a unity build (CMAKE_UNITY_BUILD).
#include <cstdint>

namespace perfhat::test_units {
inline constexpr double kMs = 1e6;  // one millisecond in nanoseconds
// A fixed instant for tests' timestamps (2025-11-21) in Unix nanoseconds: unsigned as OTLP
// carries it, signed as the store keeps it.
inline constexpr uint64_t kT0 = 1'763'700'000'000'000'000ULL;
inline constexpr int64_t kNow = static_cast<int64_t>(kT0);
}  // namespace perfhat::test_units
