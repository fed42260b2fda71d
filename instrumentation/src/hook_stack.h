// The work behind the compiler's function entry/exit hooks (-finstrument-functions, XRay): the
// function address is mapped to a probe Site, the Probe lives on a per-thread stack of frames
// (entry and exit are separate calls), and each frame sums the calibrated cost of the probes
// nested in it, which its own measured duration then leaves out (overhead compensation).
//
// A call's probes cost more in a real program than in the start-up calibration's tight loop (the
// hooks' data and branches are cold between the program's own work: 1.4-1.5x on the autobench's
// skip list). Experimental, off unless PERFHAT_COMPENSATE_IN_CONTEXT=1 (hook_stack.cc): about
// one hook pair in 64 also times its own work in place with the sampling clock; each thread
// compares the median of those times with the calibration's (ProbeCosts::reference) and adds
// the difference to every pair of that kind (ThreadStack::extra).
//
// The hooks' fast paths (disabled, never-enabled thread) are in autoinstrument.cc; this is the
// rest, entered only when probes are enabled or a thread has frames open.
#pragma once

#include <climits>
#include <cstddef>
#include <cstdint>
#include <new>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

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
  uint32_t sampled_entry;  // a sampled call: its entry hook's own ticks (at least 1), else 0
  // XRay mode: where the call's entry hook ran on the thread's stack, a fixed distance below the
  // call's own stack pointer (written before the push; unused by -finstrument-functions).
  uintptr_t sp;
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
  // In-context sampling: hooks until the next sampled call; the hooks' sampled ticks per kind
  // since the last step (the calibration's stack keeps the last kSampleBatch); what this
  // thread's pairs cost beyond the calibrated pair (fixed point).
  uint32_t sample_countdown = 1;
  uint32_t sample_rng = 0x9E3779B9u;
  bool adapt = true;  // false on the calibration's stack: samples are its reference
  static constexpr uint32_t kSampleBatch = 63;  // samples per kind whose median is one step
  uint16_t samples[kProbeKinds][kSampleBatch] = {};
  uint32_t sampled_n[kProbeKinds] = {};
  int64_t extra[kProbeKinds] = {};  // may be negative: a context cheaper than the calibration's
  struct {
    void* fn;
    detail::Site* site;
  } cache[kCacheSize] = {};
  // The thread's own stack, [stack_lo, stack_hi): found at the first leave_returned (0, 0 before;
  // everything when it cannot be known).
  uintptr_t stack_lo = 0, stack_hi = 0;
  // One spare past kMaxDepth: XRay's entry writes the next free frame's sp before knowing whether
  // the call gets a frame (one store instead of a test after the push).
  Frame frames[kMaxDepth + 1];
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
// site_for of each of `fns` (start-up's carried selection, xray_window.cc): a new one takes its
// mangled symbol from `mangled` (same order) where that has one, and the others are named in one
// pass over the symbol table. May throw std::bad_alloc.
std::vector<detail::Site*> sites_for(const std::vector<void*>& fns,
                                     const std::vector<std::string>& mangled = {});
// The mangled symbol of the function at `fn` if it has a Site with one, else "".
std::string mangled_of(void* fn);
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
  return !p.active() ? kSkipped : p.recording() ? kRecorded : p.clocked() ? kClocked : kCountedFull;
}

// The clock of in-context sampling: the TSC, whatever tick source the probes use (an injected
// test clock must not see the sampling's reads). Without a TSC nothing is sampled.
PERFHAT_NOINSTR inline uint64_t sample_clock() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  // Fenced: the program's own loads still in flight complete before the first read, and the
  // hooks' before the second. Unfenced, the hooks' time includes stalls on the program's cache
  // misses that the processor overlaps with them anyway (3-5x the real cost on the autobench).
  _mm_lfence();
  const uint64_t t = __rdtsc();
  _mm_lfence();
  return t;
#else
  return 0;
#endif
}
// Whether this hook samples; if so, the next sample is drawn 32..95 hooks on (64 on average),
// at random so that a periodic call pattern cannot keep sampling the same call. Drawn here, not
// when the sample ends: a sampled call may never return (main). The calibration arms each of
// its samples itself.
PERFHAT_NOINSTR inline bool sample_now(ThreadStack& s) noexcept {
#if defined(__x86_64__) || defined(__i386__)
  if (--s.sample_countdown != 0) [[likely]]
    return false;
  uint32_t x = s.sample_rng;
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  s.sample_rng = x;
  s.sample_countdown = s.adapt ? 32 + (x & 63) : UINT32_MAX;
  return true;
#else
  (void)s;
  return false;
#endif
}
// A sampled pair of `kind` spent `ticks` in its hooks: the sampling's own cost goes to the
// enclosing calls, the time to this thread's running estimate.
void note_sample(ThreadStack& s, ProbeKind kind, uint64_t ticks) noexcept;
// What one pair of `kind` adds to the calls enclosing it on this thread.
PERFHAT_NOINSTR inline uint64_t pair_cost(const ThreadStack& s, ProbeKind kind) noexcept {
  return static_cast<uint64_t>(static_cast<int64_t>(s.costs->pair[kind]) + s.extra[kind]);
}

// The rare paths of enter() and leave(), out of line so that the common call (in scope, not
// sampled) runs few instructions: a call whose hooks are sampled (in-context sampling), a
// function out of scope or a call past kMaxDepth, and the exit of a sampled call (hook_stack.cc).
void enter_sampled(ThreadStack& s, void* fn) noexcept;
void enter_skipped(ThreadStack& s, const detail::Site* site) noexcept;
void leave_deep(ThreadStack& s, void* fn) noexcept;
void leave_sampled(ThreadStack& s, Frame* f) noexcept;

// Phase 1's count of a call of `site` that needs nothing else (detail::call_path's kCountOnly,
// the path Probe::decide takes for it too). Then the call is counted and no probe is
// constructed: its frame's kind says kCounted, and its exit has no work but the probe's rare one
// (counted_exit). Otherwise false and nothing is touched: the probe decides.
[[gnu::always_inline]] PERFHAT_NOINSTR inline bool count_only(detail::Site& site) noexcept {
  if (site.armed.load(std::memory_order_relaxed) == 0) return false;
  detail::Hot* h = detail::t_hot;
  const uint32_t id = site.id.load(std::memory_order_relaxed);
  // A site of another kind than the hooks' own (kFunction) goes to the probe: the calibration's
  // key for kCountedFull is a kScope site.
  if (!detail::has_slot(h, id) || site.kind != detail::kFunction) return false;
  detail::Slot& slot = h->slots[id];
  if (detail::call_path(*h, slot, id, site) != detail::kCountOnly) return false;
  detail::count_call(slot);
  return true;
}
// The exit work of a counted call's probe (Probe::finish: an exception in flight, a session to
// note), rare: the probe is constructed for it (hook_stack.cc).
void counted_exit_work(ThreadStack& s, Frame* f) noexcept;
// Ends the probe of frame `f` of kind `kind` (after the discount, for a clocked one). A kCounted
// call has no probe (count_only); a kCountedFull one has.
[[gnu::always_inline]] PERFHAT_NOINSTR inline void end_probe(ThreadStack& s, Frame* f,
                                                             ProbeKind kind) noexcept {
  if (kind != kCounted) return f->probe()->~Probe();
  // No thread state in a forked child (on_fork_child): the frames its parent opened still end.
  const detail::Hot* h = detail::t_hot;
  if (h != nullptr && (*h->eh_uncaught | h->session_hash) != 0) [[unlikely]]
    counted_exit_work(s, f);
}

// Pushes the frame of an in-scope call of `site` (its probe decides counted, timed or recorded).
PERFHAT_NOINSTR inline Frame* push_frame(ThreadStack& s, void* fn, detail::Site& site) noexcept {
  Frame* f = s.top++;
  f->fn = fn;
  f->sampled_entry = 0;
  if (count_only(site)) [[likely]] {
    f->kind = kCounted;  // spent0 is read only for clocked calls
    return f;
  }
  f->spent0 = s.spent;
  f->kind = kind_of(*new (f->storage) detail::Probe(site));
  return f;
}

// Entry of the instrumented function at `fn`, on stack `s`. Inline: the hooks' common path is
// one function.
[[gnu::always_inline]] PERFHAT_NOINSTR inline void enter(ThreadStack& s, void* fn) noexcept {
  if (s.in_hook) return;
  if (sample_now(s)) [[unlikely]]
    return enter_sampled(s, fn);
  // From here on, hooks of the functions the library itself calls (instrumented copies of
  // inline functions from the user's code, symbolizing a new function) are ignored.
  s.in_hook = true;
  detail::Site* site = cached_site(s, fn);
  if (excluded(site) || s.top == s.frames + ThreadStack::kMaxDepth) [[unlikely]]
    return enter_skipped(s, site);
  push_frame(s, fn, *site);
  s.in_hook = false;
}

// Exit of the instrumented function at `fn`: the frame's probe ends, less the calibrated cost of
// the probes that finished while it ran and of its own probe inside its measured interval.
[[gnu::always_inline]] PERFHAT_NOINSTR inline void leave(ThreadStack& s, void* fn) noexcept {
  if (s.in_hook) return;
  if (s.deep > 0) [[unlikely]]
    return leave_deep(s, fn);
  if (s.top == s.frames) return;
  Frame* f = s.top - 1;
  // An exit whose entry made no frame (out of scope, or probes were off then).
  if (f->fn != fn) return;
  if (f->sampled_entry != 0) [[unlikely]]
    return leave_sampled(s, f);
  s.in_hook = true;
  const ProbeKind kind = f->kind;
  if (kind < kClocked) [[likely]] {
    // Counted or inactive: nothing to discount. The frame is popped before its probe ends
    // (nothing is pushed while in_hook is set, so its storage stays), which leaves the probe's
    // rare exit work (an error, a session) as the last call, with only `s` live across it.
    s.spent += pair_cost(s, kind);
    s.top = f;
    end_probe(s, f, kind);
    s.in_hook = false;
    return;
  }
  detail::Probe* p = f->probe();
  const uint64_t spent = s.spent;
  if (detail::g_compensate.load(std::memory_order_relaxed)) {
    p->discount((spent - f->spent0 + s.costs->self[kind]) >> kCostShift);
  }
  p->~Probe();
  s.spent = spent + pair_cost(s, kind);
  s.top = f;
  s.in_hook = false;
}

// XRay's exit of `fn` when the innermost open frame is another function's: if `fn` has an open
// frame deeper down, the frames above it belong to calls whose exits will never come (unpatched
// while they ran, or left by an exception) and are ended here, then `fn`'s; else the exit had no
// entry (patched while it ran) and is ignored. A recursive function entered before its sled was
// unpatched matches its outer call: the calls in between end at that exit (rare, and only
// their durations are long).
void leave_unmatched(ThreadStack& s, void* fn) noexcept;

// XRay's entry of a call whose entry hook runs at `sp` (Frame::sp): every open frame at or below
// that stack address belongs to a call that has returned (a live call's callees run deeper), whose
// exit was never reported (its sled unpatched while it ran, as all are while a counting window
// closes), and is ended here. Catches the frames leave_unmatched cannot: a caller that never
// returns (a worker's loop) or is not instrumented. A returned call's frame stays open until a
// call enters at its level or above (a call entering deeper meanwhile becomes its child). Only
// on the thread's own stack: a signal handler on an alternate stack (or a fiber's) above it ends
// nothing.
[[gnu::always_inline]] PERFHAT_NOINSTR inline bool returned_on_top(const ThreadStack& s,
                                                                   uintptr_t sp) noexcept {
  return s.top != s.frames && s.top[-1].sp <= sp && !s.in_hook;
}
void leave_returned(ThreadStack& s, uintptr_t sp) noexcept;

// The compiler hooks themselves, set by the -finstrument-functions mode: the calibration then
// measures a call through them (the hook call, its checks and thread-local lookups included),
// not only the frame work behind them.
extern void (*g_hook_enter)(void* fn);
extern void (*g_hook_exit)(void* fn);
// An empty function called the same way (the calibration's harness).
extern void (*volatile g_hook_none)(void* fn);

// Measures the probe costs again on the calling thread, with the current tick source (tests).
ProbeCosts recalibrate();
// The calibration handed between a program's processes with its carried selection
// (xray_window.cc): the costs in use when they were measured on this host, by this process or an
// earlier one (false before either); costs a process takes from its last one instead of
// measuring (before its first hook; false if it came late); whether this process measured.
bool measured_costs(ProbeCosts& out);
bool adopt_costs(const ProbeCosts& c);
bool costs_measured_here();

// Number of distinct functions seen (tests, diagnostics).
size_t functions_seen();

}  // namespace perfhat::autoinstrument
