// The work behind the compiler's function entry/exit hooks (-finstrument-functions, XRay): the
// function address is mapped to a probe Site, the Probe lives on a per-thread stack of frames
// (entry and exit are separate calls), and each frame sums the calibrated cost of the probes
// nested in it, which its own measured duration then leaves out (overhead compensation).
//
// The hooks' fast paths (disabled, never-enabled thread) are in autoinstrument.cc; this is the
// rest, entered only when probes are enabled or a thread has frames open.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>

#include "perfhat/perfhat.hpp"
#include "probe_calibration.h"

namespace perfhat::autoinstrument {

struct Frame {
  void* fn;
  uint64_t child_cost;  // fixed-point ticks (kCostShift) of the probes nested in this call
  ProbeKind kind;
  alignas(detail::Probe) unsigned char storage[sizeof(detail::Probe)];
  detail::Probe* probe() { return std::launder(reinterpret_cast<detail::Probe*>(storage)); }
};

struct ThreadStack {
  static constexpr int kMaxDepth = 256;    // frames with a probe; deeper calls are not recorded
  static constexpr int kCacheSize = 1024;  // direct-mapped address -> Site, per thread
  int depth = 0;
  int deep = 0;  // instrumented calls open beyond kMaxDepth
  bool in_hook = false;
  // Costs to compensate with instead of probe_costs(): the calibration's own stack measures
  // with zero costs (the bookkeeping runs, nothing is subtracted).
  const ProbeCosts* fixed_costs = nullptr;
  struct {
    void* fn;
    detail::Site* site;
  } cache[kCacheSize] = {};
  Frame frames[kMaxDepth];
};

// The calling thread's stack (created on first use; nullptr once the thread is exiting).
ThreadStack* thread_stack() noexcept;
extern PERFHAT_CONSTINIT thread_local ThreadStack* t_stack
    __attribute__((tls_model("initial-exec")));

// Entry and exit of the instrumented function at `fn`, on stack `s`.
void enter(ThreadStack& s, void* fn) noexcept;
void leave(ThreadStack& s, void* fn) noexcept;

// The Site of the function at `fn`: created and symbolized on first sight, then found without
// a lock (a process-wide table in front of the locked registry).
detail::Site* site_for(void* fn) noexcept;

// The probe costs compensation subtracts (measured at the first enabled hook of the process),
// or nullptr when compensation is off (Config::compensate_overhead).
const ProbeCosts* probe_costs() noexcept;

// The compiler hooks themselves, set by the -finstrument-functions mode: the calibration then
// measures a call through them (the hook call, its checks and thread-local lookups included),
// not only the frame work behind them.
extern void (*g_hook_enter)(void* fn);
extern void (*g_hook_exit)(void* fn);

// Measures the probe costs again on the calling thread, with the current tick source (tests).
ProbeCosts recalibrate();

// Number of distinct functions seen (tests, diagnostics).
size_t functions_seen();

}  // namespace perfhat::autoinstrument
