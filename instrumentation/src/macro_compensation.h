// Overhead compensation for the probe macros (PERFHAT_FUNCTION, PERFHAT_SCOPE, PERFHAT_REQUEST):
// a clocked call's measured duration leaves out the probes of the calls nested in it, as the
// automatic instrumentation's hook stack does for its own probes (hook_stack.h). Without it,
// under full tracing a caller of many small probed functions reports its callees' recording
// cost (about 1 µs each on the sample service) as its own time.
//
// Each thread sums, in fixed point, what the macro probes that finished on it cost (their kind's
// calibrated cost); a clocked probe notes the sum at entry and takes the difference off its
// duration at exit. Only probes that did exit work are summed (recorded or timed calls); calls
// counted or passed over inline cost a few ns and are not. Hook sites (Site::address set) are
// left to the hook stack. Config::compensate_overhead (PERFHAT_COMPENSATE=0) turns it off.
#pragma once

#include <atomic>
#include <cstdint>

#include "engine.h"
#include "probe_calibration.h"

namespace perfhat::detail {

// Fixed-point ticks (<< autoinstrument::kCostShift) one macro probe of each kind adds to an
// enclosing call's measured duration; 0 until calibrated (then nothing is taken off).
extern std::atomic<uint64_t> g_macro_pair[autoinstrument::kProbeKinds];
// Set when a probe macro's site first did exit work: until then nothing uses the costs, and a
// program with automatic instrumentation only (most short processes) never pays their
// calibration (1.2 M instructions).
extern std::atomic<bool> g_macro_probe_ran;

// On the background thread at its one-second ticks (probes enabled): measures the costs once a
// probe macro's site has run. False: nothing measured yet (no macro probe ran), ask again.
bool calibrate_macro_compensation();

inline bool macro_compensated(const Site& site) noexcept {
  return site.address == nullptr && g_compensate.load(std::memory_order_relaxed);
}
// At a clocked entry: the value Probe::discount_ starts from (ticks, wrapping).
inline uint64_t nested_probe_base(const Hot* h, const Site& site) noexcept {
  return macro_compensated(site) ? 0 - (h->owner->probe_fixed >> autoinstrument::kCostShift) : 0;
}
// At exit: the ticks nested probes cost since entry, plus what discount() added.
inline uint64_t nested_probe_ticks(const Hot* h, const Site& site, uint64_t discount) noexcept {
  return macro_compensated(site) ? discount + (h->owner->probe_fixed >> autoinstrument::kCostShift)
                                 : discount;
}
// At the end of the exit work: this probe's own cost, for the calls enclosing it.
inline void add_probe_cost(Hot* h, const Site& site, autoinstrument::ProbeKind kind) noexcept {
  if (!macro_compensated(site)) return;
  h->owner->probe_fixed += g_macro_pair[kind].load(std::memory_order_relaxed);
  // Read first: one store per process, not a shared line written at every probe.
  if (!g_macro_probe_ran.load(std::memory_order_relaxed)) [[unlikely]]
    g_macro_probe_ran.store(true, std::memory_order_relaxed);
}

}  // namespace perfhat::detail
