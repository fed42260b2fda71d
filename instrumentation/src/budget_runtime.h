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

// Word 0: number of sites covered (n); word 1: the table's serial number; then one threshold per
// site id: a call is kept when a uniform 64-bit draw is below it (~0 = always, 0 = never); then n
// weight scales (doubles' bits): a kept call stands for scale / its probability calls. The scale
// is 1 except for a re-arm window's records (budget_rearm.h), which also stand for the calls of
// the windows their site was disarmed in. Sites past the end are kept.
extern std::atomic<const uint64_t*> g_keep;

// The decision for a call that reached the probe's slow path, made as a
// geometric skip: after each taken call the slot draws how many calls to pass over
// (Slot::budget_skip, counted down inline at one decrement each, no clock, no count), so calls
// are still taken independently with the site's probability p, yet only taken calls pay for the
// decision. The run's calls are added to the slot's count when it ends, so phase-1 counts stay
// exact. A call at the end of a run is kept; a call with no run in progress (the first, the
// first after a rate of 1, or the one after a capped run) is a plain Bernoulli draw. Runs last
// at most kMaxRun calls, so a new plan's rates apply on every thread within kMaxRun calls of a
// site; only the owning thread ever writes a slot (a run cut from another thread raced with the
// owner's inline decrement: phantom or lost calls).
enum class Take { kKeep, kKeepSampled, kPass };
Take take(uint32_t site, detail::Hot* h, detail::Slot& slot) noexcept;
// A request root's decision: a Bernoulli draw at the current rate on every call, no skip run
// (a root is a whole request, so the draw costs little, and a plan that traces the root's class
// again records the next request on every thread). A root passed over opens no request context,
// so the calls inside it decide as calls outside any request do (each still weighted by 1 / the
// probability it was recorded with).
Take take_request(uint32_t site, detail::Hot* h, detail::Slot& slot) noexcept;
// Calls to pass over before the next taken one for a draw x (uniform 64-bit): geometric with
// success probability `probability`, capped at kLongestSkip (take() caps runs at kMaxRun).
uint32_t skip_length(uint64_t x, double probability) noexcept;
inline constexpr uint32_t kLongestSkip = (1u << 31) - 1;

// A recorded call's weight: the site's scale / the probability it was taken with (1 without a
// budget). The last call take() kept at `site` on this thread is worth that of its run's draw
// (one per thread: a run ending right after a rate change, nested in another, is weighted at
// the new rate).
double weight(uint32_t site, detail::Hot* h) noexcept;
// The probability itself (1 without a budget).
double probability(uint32_t site) noexcept;

// Probability -> threshold, exactly ~0 for 1 and 0 for 0.
uint64_t threshold(double probability) noexcept;

// Calls a run in progress has passed over so far (the owner adds them to count when it ends).
inline uint32_t passed_over(uint32_t run, uint32_t skip) noexcept {
  return run > skip ? run - skip : 0;
}

// Publishes a new table (probability per site id, index 0 unused; weight scales per site id,
// missing ones 1). Earlier tables stay readable for kRetainedTables publications: a probe holds
// the pointer for a few instructions, a publication comes once per planning window (≥ 0.1 s).
void publish(const std::vector<double>& probability, const std::vector<double>& scale = {});
// Back to "keep every call" (shutdown, tests).
void clear();
// The published table's thresholds per site id (empty: no table), and its republication (a copy,
// under a new serial; empty: clear()). The start-up calibration overrides its own site's rate
// with these while other threads' probes keep reading the plan's rates, and restores the plan
// when done.
std::vector<uint64_t> published_thresholds();
std::vector<double> published_scales();
void publish_thresholds(const std::vector<uint64_t>& thresholds,
                        const std::vector<double>& scale = {});
inline constexpr std::size_t kRetainedTables = 64;
// The longest skip run: a site re-reads its rate at least every kMaxRun calls on each thread
// (rate 0: one out-of-line call in 1,024; the cost of the cap at low rates is one slow path per
// kMaxRun calls instead of one per 1/p).
inline constexpr uint32_t kMaxRun = 1024;
inline constexpr std::size_t kTableHeader = 2;

}  // namespace perfhat::budget
