// The TSC's rate against the steady clock, estimated over a baseline that starts when probes
// are activated. Activation waits only for a provisional baseline; the estimate is settled by the
// first conversion that needs it once the baseline is long enough (Engine::ns_per_tick, clock.cc),
// so a process does not spend its start-up waiting for a clock reading it may never convert.
#pragma once

#include <cstdint>

namespace perfhat::detail {

// Activation's wait: at a few tens of nanoseconds per bracketed steady-clock read, a 20 us
// baseline is good to about 0.3 %, enough for the sampler's decisions until it settles.
inline constexpr uint64_t kProvisionalBaselineNs = 20'000;
// A settled estimate: 200 us, good to about 0.05 % (the background thread refines it further
// over 100 ms and more).
inline constexpr uint64_t kSettledBaselineNs = 200'000;

struct TickBaseline {
  uint64_t tick0 = 0, steady0 = 0;
  // Nanoseconds per tick from the baseline's start to a reading (tick, steady) after it.
  double ns_per_tick(uint64_t tick, uint64_t steady) const {
    return tick > tick0 ? static_cast<double>(steady - steady0) / static_cast<double>(tick - tick0)
                        : 1.0;
  }
  bool provisional(uint64_t steady) const { return steady - steady0 >= kProvisionalBaselineNs; }
  bool settled(uint64_t steady) const { return steady - steady0 >= kSettledBaselineNs; }
};

// Whether the TSC runs at a constant rate in every power state: CPUID's invariant-TSC bit, or
// the kernel's constant_tsc and nonstop_tsc flags in /proc/cpuinfo (read only without the bit).
bool cpuid_invariant_tsc();
bool cpuinfo_invariant_tsc();

}  // namespace perfhat::detail
