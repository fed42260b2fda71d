// The collection budget's per-site recording probabilities, read by the probe when a call is
// about to be recorded (Probe::begin) and by the recorder for the call's weight. Published as a
// whole table, swapped atomically each planning window; nullptr = no budget (keep every call).
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

namespace perfhat::detail {
struct Hot;
struct Slot;
}  // namespace perfhat::detail

namespace perfhat::budget {

// Word 0: number of sites covered; word 1: the table's serial number; then one threshold per site
// id: a call is kept when a uniform 64-bit draw is below it (~0 = always, 0 = never). Sites past
// the end are kept.
extern std::atomic<const uint64_t*> g_keep;

// The decision for a call that reached the probe's slow path, made as a
// geometric skip: after each taken call the slot draws how many calls to pass over
// (Slot::budget_skip, counted down inline at one decrement each, no clock, no count), so calls
// are still taken independently with the site's probability p, yet only taken calls pay for the
// decision. The run's calls are added to the slot's count when it ends, so phase-1 counts stay
// exact. A call at the end of a run is kept; a call with no run in progress (the first, or the
// first after a rate of 1) is a plain Bernoulli draw. A request root is decided the same way:
// one passed over opens no request context, so the calls inside it decide as calls outside any
// request do (each still weighted by 1 / the probability it was recorded with).
enum class Take { kKeep, kKeepSampled, kPass };
Take take(uint32_t site, detail::Hot* h, detail::Slot& slot) noexcept;
// Calls to pass over before the next taken one for a draw x (uniform 64-bit): geometric with
// success probability `probability`, capped below 2^32.
uint32_t skip_length(uint64_t x, double probability) noexcept;

// A recorded call's weight: 1 / the probability it was taken with (1 without a budget). The
// last call take() kept at `site` on this thread is worth 1 / the rate its run was drawn with
// (one per thread: a run ending right after a rate change, nested in another, is weighted at
// the new rate).
double weight(uint32_t site, detail::Hot* h) noexcept;
// The probability itself (1 without a budget).
double probability(uint32_t site) noexcept;

// Probability -> threshold, exactly ~0 for 1 and 0 for 0.
uint64_t threshold(double probability) noexcept;

// Publishes a new table (probability per site id, index 0 unused). Earlier tables stay readable
// for kRetainedTables publications: a probe holds the pointer for a few instructions, a
// publication comes once per planning window (≥ 0.1 s).
void publish(const std::vector<double>& probability);
// Back to "keep every call" (shutdown, tests).
void clear();
inline constexpr std::size_t kRetainedTables = 64;
// A site kept at rate 0 re-reads its rate after this many calls (one out-of-line call in 1,024).
inline constexpr uint32_t kZeroRateRun = 1024;
inline constexpr std::size_t kTableHeader = 2;

}  // namespace perfhat::budget
