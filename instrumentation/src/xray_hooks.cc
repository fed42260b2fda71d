// LLVM XRay mode (Clang, -fxray-instrument): the compiler leaves a few bytes of no-ops (a sled)
// at the entry and exits of each function it instruments, and compiler-rt's XRay runtime can
// patch a sled into a call of our handler at run time. So:
//   - probes off (PERFHAT_ENABLED=0): nothing is patched, each instrumented function runs its
//     no-ops only;
//   - on: every sled is patched at start-up; a function found outside PERFHAT_SCOPE on its
//     first call is unpatched again, so it costs nothing from then on;
//   - small functions get no sled at all (-fxray-instruction-threshold, set by
//     perfhat_autoinstrument(... XRAY)): the compile-time exclusion of trivial functions.
// The handler shares the -finstrument-functions mode's stack, sites and compensation
// (hook_stack.h). This file is compiled by any compiler (the XRay interface is declared here,
// not included): only the program it is linked into must be built with Clang and XRay.
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <memory>

#include "engine.h"
#include "hook_stack.h"

extern "C" {
enum XRayEntryType { ENTRY = 0, EXIT = 1, TAIL = 2, LOG_ARGS_ENTRY = 3 };
enum XRayPatchingStatus { NOT_INITIALIZED = 0, SUCCESS = 1, ONGOING = 2, FAILED = 3 };
int __xray_set_handler(void (*entry)(int32_t, XRayEntryType));
XRayPatchingStatus __xray_patch();
XRayPatchingStatus __xray_unpatch_function(int32_t fid);
uintptr_t __xray_function_address(int32_t fid);
size_t __xray_max_function_id();
}

#define PERFHAT_XRAY_NOINSTR __attribute__((no_instrument_function, xray_never_instrument))

namespace perfhat::autoinstrument {
namespace {

// Function id -> entry address, read by the handler (written once, before any sled is patched).
std::unique_ptr<void*[]> g_fns;
size_t g_max_fid = 0;
std::atomic<size_t> g_unpatched{0};

PERFHAT_XRAY_NOINSTR void on_xray(int32_t fid, XRayEntryType type) {
  if (fid <= 0 || static_cast<size_t>(fid) > g_max_fid) return;
  void* fn = g_fns[fid];
  if (type == ENTRY || type == LOG_ARGS_ENTRY) {
    if (detail::g_mode.load(std::memory_order_relaxed) != detail::kEnabled) return;
    ThreadStack* s = thread_stack();
    if (s == nullptr) return;
    const Frame* top = s->top;
    const bool nested = s->in_hook;
    enter(*s, fn);
    if (nested || s->top != top || s->deep != 0) return;
    // No frame: outside the scope. No more calls to this handler for it (retried on a later
    // call if another thread was patching at the time).
    detail::Site* site = site_for(fn);
    if (site->id.load(std::memory_order_relaxed) == detail::kExcludedSite &&
        __xray_unpatch_function(fid) == SUCCESS) {
      g_unpatched.fetch_add(1, std::memory_order_relaxed);
    }
    return;
  }
  ThreadStack* s = t_stack;
  if (s != nullptr) leave(*s, fn);
}

// After the XRay runtime's own initialization (it runs from .preinit_array).
[[gnu::constructor(65535)]] PERFHAT_XRAY_NOINSTR void start_xray() {
  if (detail::ensure_initialized() != detail::kEnabled) return;  // sleds stay no-ops
  g_max_fid = __xray_max_function_id();
  if (g_max_fid == 0) return;  // the program was not built with -fxray-instrument
  g_fns.reset(new void*[g_max_fid + 1]());
  for (size_t fid = 1; fid <= g_max_fid; ++fid) {
    g_fns[fid] = reinterpret_cast<void*>(__xray_function_address(static_cast<int32_t>(fid)));
  }
  __xray_set_handler(&on_xray);
  if (__xray_patch() != SUCCESS) {
    std::fputs("perfhat: XRay could not patch the program's sleds; nothing is recorded\n", stderr);
  }
}

}  // namespace

// Functions whose sleds were unpatched because they are outside the scope (tests).
PERFHAT_XRAY_NOINSTR size_t xray_unpatched() { return g_unpatched.load(); }
// Functions XRay instrumented in the program (0 without -fxray-instrument).
PERFHAT_XRAY_NOINSTR size_t xray_functions() { return g_max_fid; }

}  // namespace perfhat::autoinstrument

// Referenced by the link option of perfhat::xray so this file (and its constructor) is linked.
extern "C" PERFHAT_XRAY_NOINSTR void perfhat_xray_anchor() {}
