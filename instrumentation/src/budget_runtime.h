// The collection budget's per-site recording probabilities, read by the probe when a call is
// about to be recorded (Probe::begin) and by the recorder for the call's weight. Published as a
// whole table, swapped atomically each planning window; nullptr = no budget (keep every call).
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

namespace perfhat::detail {
struct Hot;
}

namespace perfhat::budget {

// Word 0: number of sites covered; then one threshold per site id: a call is kept when a uniform
// 64-bit draw is below it (~0 = always, 0 = never). Sites past the end are kept.
extern std::atomic<const uint64_t*> g_keep;

// Bernoulli draw against the site's threshold, on the thread's xorshift state.
bool keep(uint32_t site, detail::Hot* h) noexcept;
// 1 / the probability `site`'s calls are kept with (1 without a budget).
double weight(uint32_t site) noexcept;

// Probability -> threshold, exactly ~0 for 1 and 0 for 0.
uint64_t threshold(double probability) noexcept;

// Publishes a new table (probability per site id, index 0 unused). Earlier tables stay readable
// for kRetainedTables publications: a probe holds the pointer for a few instructions, a
// publication comes once per planning window (≥ 0.1 s).
void publish(const std::vector<double>& probability);
// Back to "keep every call" (shutdown, tests).
void clear();
inline constexpr std::size_t kRetainedTables = 64;

}  // namespace perfhat::budget
