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

#define PERFHAT_NOINSTR __attribute__((no_instrument_function))

namespace perfhat::detail {
extern std::atomic<bool> g_compensate;  // Config::compensate_overhead
}  // namespace perfhat::detail

namespace perfhat::autoinstrument {

struct Frame {
  void* fn;
  uint64_t spent0;  // the thread's ThreadStack::spent when this call began
  ProbeKind kind;
  alignas(detail::Probe) unsigned char storage[sizeof(detail::Probe)];
  PERFHAT_NOINSTR detail::Probe* probe() {
    return std::launder(reinterpret_cast<detail::Probe*>(storage));
  }
};

// Measured at the first enabled hook of the process.
extern ProbeCosts g_costs;

struct ThreadStack {
  static constexpr int kMaxDepth = 256;    // frames with a probe; deeper calls are not recorded
  static constexpr int kCacheSize = 1024;  // direct-mapped address -> Site, per thread
  Frame* top = frames;                     // the next free frame
  int deep = 0;                            // instrumented calls open beyond kMaxDepth
  bool in_hook = false;
  // Calibrated cost (fixed-point ticks) of every probe that finished on this thread: a call's
  // nested probes cost what it grew by while the call ran.
  uint64_t spent = 0;
  // The costs compensation uses; the calibration's own stack counts with zero costs (the
  // bookkeeping runs, nothing is subtracted).
  const ProbeCosts* costs = &g_costs;
  struct {
    void* fn;
    detail::Site* site;
  } cache[kCacheSize] = {};
  Frame frames[kMaxDepth];
  PERFHAT_NOINSTR int depth() const { return static_cast<int>(top - frames); }
  PERFHAT_NOINSTR static size_t cache_index(void* fn) {
    return (reinterpret_cast<uintptr_t>(fn) >> 4) & (kCacheSize - 1);
  }
};

extern PERFHAT_CONSTINIT thread_local ThreadStack* t_stack
    __attribute__((tls_model("initial-exec")));
ThreadStack* thread_stack_slow() noexcept;
// The Site of the function at `fn`: created and symbolized on first sight, then found without
// a lock (a process-wide table in front of the locked registry).
detail::Site* site_for(void* fn) noexcept;
// A miss of the thread's cache: site_for, then the cache entry.
detail::Site* fill_cache(ThreadStack& s, void* fn) noexcept;
// The calling thread's stack (created on first use; nullptr once the thread is exiting).
PERFHAT_NOINSTR inline ThreadStack* thread_stack() noexcept {
  ThreadStack* s = t_stack;
  return s != nullptr ? s : thread_stack_slow();
}

// The probe costs compensation subtracts, or nullptr when it is off
// (Config::compensate_overhead).
PERFHAT_NOINSTR inline const ProbeCosts* probe_costs() noexcept {
  return detail::g_compensate.load(std::memory_order_relaxed) ? &g_costs : nullptr;
}

PERFHAT_NOINSTR inline detail::Site* cached_site(ThreadStack& s, void* fn) noexcept {
  auto& c = s.cache[ThreadStack::cache_index(fn)];
  return c.fn == fn ? c.site : fill_cache(s, fn);
}
PERFHAT_NOINSTR inline bool excluded(const detail::Site* site) noexcept {
  return site->id.load(std::memory_order_relaxed) == detail::kExcludedSite;
}
PERFHAT_NOINSTR inline ProbeKind kind_of(const detail::Probe& p) noexcept {
  return !p.active() ? kSkipped : p.recording() ? kRecorded : p.clocked() ? kClocked : kCounted;
}

// Entry of the instrumented function at `fn`, on stack `s`. Inline: the hooks' whole enabled
// path is one function.
PERFHAT_NOINSTR inline void enter(ThreadStack& s, void* fn) noexcept {
  if (s.in_hook) return;
  // From here on, hooks of the functions the library itself calls (instrumented copies of
  // inline functions from the user's code, symbolizing a new function) are ignored.
  s.in_hook = true;
  detail::Site* site = cached_site(s, fn);
  if (excluded(site) || s.top == s.frames + ThreadStack::kMaxDepth) [[unlikely]] {
    if (!excluded(site)) ++s.deep;
    s.spent += s.costs->pair[kSkipped];
    s.in_hook = false;
    return;
  }
  Frame* f = s.top++;
  f->fn = fn;
  f->spent0 = s.spent;
  f->kind = kind_of(*new (f->storage) detail::Probe(*site));
  s.in_hook = false;
}

// Exit of the instrumented function at `fn`: the frame's probe ends, less the calibrated cost of
// the probes that finished while it ran and of its own probe inside its measured interval.
PERFHAT_NOINSTR inline void leave(ThreadStack& s, void* fn) noexcept {
  if (s.in_hook) return;
  if (s.deep > 0) [[unlikely]] {
    s.in_hook = true;
    if (!excluded(cached_site(s, fn))) --s.deep;
    s.in_hook = false;
    return;
  }
  if (s.top == s.frames) return;
  Frame* f = s.top - 1;
  // An exit whose entry made no frame (out of scope, or probes were off then).
  if (f->fn != fn) return;
  s.in_hook = true;
  detail::Probe* p = f->probe();
  const ProbeCosts& c = *s.costs;
  const uint64_t spent = s.spent;
  if (f->kind >= kClocked && detail::g_compensate.load(std::memory_order_relaxed)) {
    p->discount((spent - f->spent0 + c.self[f->kind]) >> kCostShift);
  }
  p->~Probe();
  s.spent = spent + c.pair[f->kind];
  s.top = f;
  s.in_hook = false;
}

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
