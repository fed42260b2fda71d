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
// success probability `probability`, capped below 2^31 (kRunCut).
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

// A plan's rates: publishes `after` (probability per site id) and ends the skip runs in progress,
// on every thread, of each site whose probability differs from `before` (the last plan's; sites
// past its end count as 1). A run is drawn for the rate it was drawn at; without the cut it
// outlasts the plan: a run drawn at rate 0 (probing mode, a class the plan did not trace) passed
// over its next kZeroRateRun calls on each thread after a plan traced the class again, minutes of
// a request root's calls on a thread pool, none of them recorded or weighted. Cutting a run is
// unbiased: a geometric skip is one independent draw per call, so the calls it passed over were
// each left out at the old rate, and the calls after the cut are drawn at the new one.
void publish_plan(const std::vector<double>& before, const std::vector<double>& after);
// Ends the slot's skip run in progress (called by another thread than the owner, the engine's
// background thread, under the engine's lock): the calls it passed over stay counted (the next
// taken call adds them), and the next call is a fresh draw at the table's rate, not the run's
// end. A probe of the owner racing with the cut (a few instructions' window, once per plan
// change) can only keep the old run going (the cut is lost, as before the fix) or count the
// passed-over calls as of the cut.
void cut_run(detail::Slot& slot) noexcept;
// budget_run's mark of a cut run (its low bits are the calls it passed over); runs are capped
// below it.
inline constexpr uint32_t kRunCut = 1u << 31;
// Calls a run in progress has passed over so far (the owner adds them to count when it ends).
inline uint32_t passed_over(uint32_t run, uint32_t skip) noexcept {
  if (run & kRunCut) return run & ~kRunCut;
  return run > skip ? run - skip : 0;
}

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
