// LLVM XRay mode (Clang, -fxray-instrument): the compiler leaves a few bytes of no-ops (a sled)
// at the entry and exits of each function it instruments, and compiler-rt's XRay runtime can
// patch a sled into a call of our handler at run time. So:
//   - probes off (PERFHAT_ENABLED=0): nothing is patched, each instrumented function runs its
//     no-ops only;
//   - on: every sled is patched at start-up; a function found outside PERFHAT_SCOPE on its
//     first call is unpatched again, so it costs nothing from then on; with a Tigris filter,
//     phase 1 counts in windows and between them only the selected functions stay patched
//     (xray_window.cc);
//   - small functions get no sled at all (-fxray-instruction-threshold, set by
//     perfhat_autoinstrument(... XRAY)): the compile-time exclusion of trivial functions.
// The handler shares the -finstrument-functions mode's stack, sites and compensation
// (hook_stack.h). This file is compiled by any compiler (the XRay interface is declared in
// xray_interface.h, not included): only the program it is linked into must be built with Clang
// and XRay.
#include <atomic>
#include <cstdint>
#include <cstdio>

#include "engine.h"
#include "hook_stack.h"
#include "xray_interface.h"

namespace perfhat::autoinstrument {
namespace {

// Function id -> entry address, filled in at each function's first call: XRay's lookup costs
// about a thousand instructions, and doing it for every function at start-up was 2.6 M
// instructions per process on googletest's samples, whose programs call few of their functions.
// Any thread may fill a slot, always with the same value. Three ids past the program's are the
// start-up calibration's (its keys: counted or timed, skipped, counted by a probe).
// Never freed: sleds fire in static destructors after this file's own would have run.
std::atomic<void*>* g_fns = nullptr;
size_t g_max_fid = 0;
std::atomic<size_t> g_unpatched{0};

// Every function's address, read once at start-up (xray_function_map.cc), or nullptr: then
// XRay's own look-up, per function.
const uintptr_t* g_addresses = nullptr;

[[gnu::noinline]] PERFHAT_XRAY_NOINSTR void* look_up_function(int32_t fid) {
  void* fn = nullptr;
  if (static_cast<size_t>(fid) <= g_max_fid) {
    fn = reinterpret_cast<void*>(g_addresses != nullptr ? g_addresses[fid]
                                                        : __xray_function_address(fid));
    g_fns[fid].store(fn, std::memory_order_relaxed);
  }
  return fn;
}

[[gnu::always_inline]] PERFHAT_XRAY_NOINSTR inline void* function_of(int32_t fid) {
  void* fn = g_fns[fid].load(std::memory_order_relaxed);
  return fn != nullptr ? fn : look_up_function(fid);
}

// Every entry the fast path below leaves: the full path (window batches, the thread's first call,
// a function's first call, stale frames, sampling, the scope, the probe's decision).
[[gnu::noinline]] PERFHAT_XRAY_NOINSTR void entry_in_full(int32_t fid, uintptr_t sp) {
  count_window_call();
  void* fn = function_of(fid);
  ThreadStack* s = thread_stack();
  if (s == nullptr) return;
  if (returned_on_top(*s, sp)) [[unlikely]]
    leave_returned(*s, sp);
  Frame* top = s->top;
  top->sp = sp;  // the frame enter() pushes, if any (push_frame leaves sp alone)
  const bool nested = s->in_hook;
  enter(*s, fn);
  if (nested || s->top != top || s->deep != 0) return;
  // No frame: outside the scope. No more calls to this handler for it (retried on a later
  // call if another thread was patching at the time).
  detail::Site* site = site_for(fn);
  if (site->id.load(std::memory_order_relaxed) == detail::kExcludedSite &&
      patch_locked([fid] { return __xray_unpatch_function(fid); }, false) == SUCCESS) {
    g_unpatched.fetch_add(1, std::memory_order_relaxed);
  }
}

// The common entry, a call phase 1 only counts, as entry_in_full would take it (count_only),
// with no call: anything else, checked before anything is written, goes to entry_in_full.
[[gnu::noinline]] PERFHAT_XRAY_NOINSTR void on_xray_entry(int32_t fid) {
  if (detail::g_mode.load(std::memory_order_relaxed) != detail::kEnabled) return;
  // Every entry comes through the runtime's trampoline and on_xray: this frame, and so a local
  // in it, is a fixed distance below the called function's stack pointer (the full path is
  // passed the same address). A local's address, not __builtin_frame_address or
  // __builtin_dwarf_cfa: under Clang either sets up a frame pointer.
  char here;
  const auto sp = reinterpret_cast<uintptr_t>(&here);
  ThreadStack* s = t_stack;
  void* fn = g_fns[fid].load(std::memory_order_relaxed);
  if (s == nullptr || fn == nullptr || ((t_window_calls + 1) & (kWindowBatch - 1)) == 0 ||
      s->in_hook || s->sample_countdown == 1 || returned_on_top(*s, sp) ||
      s->top == s->frames + ThreadStack::kMaxDepth) [[unlikely]]
    return entry_in_full(fid, sp);
  const auto& c = s->cache[ThreadStack::cache_index(fn)];
  if (c.fn != fn || excluded(c.site) || !count_only(*c.site)) [[unlikely]]
    return entry_in_full(fid, sp);
  ++t_window_calls;
  --s->sample_countdown;
  // Written whole before it is pushed: a signal handler's hooks on this thread (no in_hook here)
  // see either no frame or this one complete.
  Frame* f = s->top;
  f->sp = sp;
  f->fn = fn;
  f->sampled_entry = 0;
  f->kind = kCounted;
  std::atomic_signal_fence(std::memory_order_release);
  s->top = f + 1;
}

// Every exit the fast path below leaves.
[[gnu::noinline]] PERFHAT_XRAY_NOINSTR void exit_in_full(int32_t fid) {
  ThreadStack* s = t_stack;
  if (s == nullptr) return;
  // Before the frame work, which then ends in a tail call: unpatching the function's sleds now
  // does not affect this exit, already in the handler.
  count_function_exit(fid);
  void* fn = function_of(fid);
  // Not the innermost open call: a call whose sled was unpatched while it ran (a counting window
  // closed), or left by an exception (XRay reports no exit for it), may be open above this one.
  if (s->top != s->frames && s->top[-1].fn != fn && !s->in_hook && s->deep == 0) [[unlikely]]
    return leave_unmatched(*s, fn);
  leave(*s, fn);
}

// The common exit, of a counted call whose frame is on top, as exit_in_full would take it (leave,
// with no rare work for the probe), with no call; anything else goes to exit_in_full.
[[gnu::noinline]] PERFHAT_XRAY_NOINSTR void on_xray_exit(int32_t fid) {
  ThreadStack* s = t_stack;
  if (s == nullptr) return;
  std::atomic<int32_t>* countdown = g_window_countdown.load(std::memory_order_acquire);
  const detail::Hot* h = detail::t_hot;
  Frame* f = s->top - 1;
  if (s->top == s->frames || f->kind != kCounted ||
      f->fn != g_fns[fid].load(std::memory_order_relaxed) || f->sampled_entry != 0 || s->in_hook ||
      s->deep != 0 || h == nullptr || (*h->eh_uncaught | h->session_hash) != 0 ||
      (countdown != nullptr && countdown[fid].load(std::memory_order_relaxed) <= 1)) [[unlikely]]
    return exit_in_full(fid);
  if (countdown != nullptr) {  // as count_function_exit: not an atomic decrement
    countdown[fid].store(countdown[fid].load(std::memory_order_relaxed) - 1,
                         std::memory_order_relaxed);
  }
  s->spent += pair_cost(*s, kCounted);
  s->top = f;
}

PERFHAT_XRAY_NOINSTR void on_xray(int32_t fid, XRayEntryType type) {
  if (fid <= 0 || static_cast<size_t>(fid) > g_max_fid + kCalibrationFids) return;
  if (type == ENTRY || type == LOG_ARGS_ENTRY) return on_xray_entry(fid);
  on_xray_exit(fid);
}

// The calibration's calls go through the runtime's trampolines as a patched sled's do (the
// trampoline saves and restores the registers around the handler: most of an XRay pair's cost),
// with the stack as a sled leaves it: 8 bytes off 16-byte alignment at a function's entry, on
// it at the return. The red zone below the stack pointer is left alone.
PERFHAT_XRAY_NOINSTR int32_t calibration_fid(void* fn) {
  for (size_t i = 1; i <= kCalibrationFids; ++i) {
    std::atomic<void*>& slot = g_fns[g_max_fid + i];
    void* seen = slot.load(std::memory_order_relaxed);
    if (seen == fn || seen == nullptr) {
      slot.store(fn, std::memory_order_relaxed);
      return static_cast<int32_t>(g_max_fid + i);
    }
  }
  return 0;  // ignored by the handler
}
#define PERFHAT_XRAY_CLOBBERS                                                                     \
  "rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "rbx", "xmm0", "xmm1", "xmm2",     \
      "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", \
      "xmm14", "xmm15", "memory", "cc"
// A call into an XRay trampoline as a sled makes it: the function id in %r10d, the stack below
// the red zone and 16-byte aligned; CALL is the instructions from there to the call.
#define PERFHAT_XRAY_CALL_AS_SLED(fid, call)                                    \
  asm volatile(                                                                 \
      "movl %0, %%r10d\n\t" /* first: the operand may be addressed from %rsp */ \
      "movq %%rsp, %%rbx\n\t"                                                   \
      "subq $128, %%rsp\n\t"                                                    \
      "andq $-16, %%rsp\n\t" call "movq %%rbx, %%rsp"                           \
      :                                                                         \
      : "m"(fid)                                                                \
      : PERFHAT_XRAY_CLOBBERS)
[[gnu::noinline]] PERFHAT_XRAY_NOINSTR void calibration_enter(void* fn) {
#if defined(__x86_64__)
  const int32_t fid = calibration_fid(fn);
  PERFHAT_XRAY_CALL_AS_SLED(fid,
                            "subq $8, %%rsp\n\t"  // a function's entry: 8 bytes off alignment
                            "call __xray_FunctionEntry\n\t");
#else
  (void)fn;
#endif
}
[[gnu::noinline]] PERFHAT_XRAY_NOINSTR void calibration_exit(void* fn) {
#if defined(__x86_64__)
  const int32_t fid = calibration_fid(fn);
  PERFHAT_XRAY_CALL_AS_SLED(fid, "call __xray_FunctionExit\n\t");
#else
  (void)fn;
#endif
}

// Patches what the process starts with.
PERFHAT_XRAY_NOINSTR void start_sleds() {
  g_max_fid = __xray_max_function_id();
  if (g_max_fid == 0) return;  // the program was not built with -fxray-instrument
  g_fns = new std::atomic<void*>[g_max_fid + 1 + kCalibrationFids]();
  g_addresses = xray_function_addresses(g_max_fid);
#if defined(__x86_64__)
  g_hook_enter = &calibration_enter;
  g_hook_exit = &calibration_exit;
#endif
  __xray_set_handler(&on_xray);
  if (start_windows()) return;  // patched what it starts with
  if (patch_locked([] { return __xray_patch(); }) != SUCCESS)
    std::fputs("perfhat: XRay could not patch the program's sleds; nothing is recorded\n", stderr);
}

// After the XRay runtime's own initialization (it runs from .preinit_array). The engine's
// background thread waits for the verdict on a carried selection: a process that starts from one
// starts the thread when first needed (Engine::request_background_on_demand).
[[gnu::constructor(65535)]] PERFHAT_XRAY_NOINSTR void start_xray() {
  detail::Engine::request_background_on_demand(true);
  const int mode = detail::ensure_initialized();
  detail::Engine::request_background_on_demand(false);  // taken by activation, or not wanted
  if (mode != detail::kEnabled) return;                 // sleds stay no-ops
  start_sleds();
  if (window_carried() == 0) detail::Engine::get().start_background();
}

}  // namespace

// Functions whose sleds were unpatched because they are outside the scope (tests).
PERFHAT_XRAY_NOINSTR size_t xray_unpatched() { return g_unpatched.load(); }
// Functions XRay instrumented in the program (0 without -fxray-instrument).
PERFHAT_XRAY_NOINSTR size_t xray_functions() { return g_max_fid; }
// Whether function addresses come from the one-pass map (tests).
PERFHAT_XRAY_NOINSTR bool xray_address_map() { return g_addresses != nullptr; }
PERFHAT_XRAY_NOINSTR std::mutex& patching_mutex() {
  static auto* mu = new std::mutex();  // never destroyed: sleds fire in static destructors
  return *mu;
}

PERFHAT_XRAY_NOINSTR void* xray_function(int32_t fid) {
  return fid > 0 && static_cast<size_t>(fid) <= g_max_fid ? function_of(fid) : nullptr;
}
PERFHAT_XRAY_NOINSTR void* xray_seen_function(int32_t fid) {
  return static_cast<size_t>(fid) <= g_max_fid ? g_fns[fid].load(std::memory_order_relaxed)
                                               : nullptr;
}

}  // namespace perfhat::autoinstrument

// Referenced by the link option of perfhat::xray so this file (and its constructor) is linked.
extern "C" PERFHAT_XRAY_NOINSTR void perfhat_xray_anchor() {}
