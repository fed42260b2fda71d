// -finstrument-functions mode: every function compiled with the flag calls these two hooks.
// They are kept to their fast paths so the compiler gives them no stack frame:
//   - probes disabled (PERFHAT_ENABLED=0, set_enabled(false), after shutdown): one load and a
//     compare at entry; at exit, one thread-local load when the thread never had a frame;
//   - everything else (the function's Site, scope, the probe, compensation) in hook_stack.cc.
#include "engine.h"
#include "hook_stack.h"

namespace {

// Set while the first hook initializes the library: inline functions the engine calls may be
// instrumented copies from the user's translation units, whose hooks must not re-enter.
constinit thread_local bool t_initializing = false;

[[gnu::noinline]] PERFHAT_NOINSTR void enter_enabled(void* fn) noexcept {
  using namespace perfhat::detail;
  // The first hook initializes from the environment (PERFHAT_ENABLED=0 stops here).
  if (g_mode.load(std::memory_order_relaxed) == kUninitialized) {
    if (t_initializing) return;
    t_initializing = true;
    const int mode = ensure_initialized();
    t_initializing = false;
    if (mode != kEnabled) return;
  }
  perfhat::autoinstrument::ThreadStack* s = perfhat::autoinstrument::thread_stack();
  if (s != nullptr) perfhat::autoinstrument::enter(*s, fn);
}

// Out of line: the exit hook's own path (no frames on this thread) stays frameless.
[[gnu::noinline]] PERFHAT_NOINSTR void leave_frame(perfhat::autoinstrument::ThreadStack* s,
                                                   void* fn) noexcept {
  perfhat::autoinstrument::leave(*s, fn);
}

}  // namespace

// NOLINTNEXTLINE(bugprone-reserved-identifier): hook name fixed by -finstrument-functions
extern "C" PERFHAT_NOINSTR void __cyg_profile_func_enter(void* fn, void* /*call_site*/) {
  if (perfhat::detail::g_mode.load(std::memory_order_relaxed) == perfhat::detail::kDisabled) return;
  enter_enabled(fn);
}

// NOLINTNEXTLINE(bugprone-reserved-identifier): hook name fixed by -finstrument-functions
extern "C" PERFHAT_NOINSTR void __cyg_profile_func_exit(void* fn, void* /*call_site*/) {
  perfhat::autoinstrument::ThreadStack* s = perfhat::autoinstrument::t_stack;
  if (s == nullptr) return;
  leave_frame(s, fn);
}

namespace {
PERFHAT_NOINSTR void hook_enter(void* fn) { __cyg_profile_func_enter(fn, nullptr); }
PERFHAT_NOINSTR void hook_exit(void* fn) { __cyg_profile_func_exit(fn, nullptr); }
// Before main and before the first probe of most programs (a hook run earlier, from another
// static constructor, calibrates without the hook calls: a slightly lower cost).
[[gnu::constructor(101)]] PERFHAT_NOINSTR void register_hooks() {
  perfhat::autoinstrument::g_hook_enter = &hook_enter;
  perfhat::autoinstrument::g_hook_exit = &hook_exit;
}
}  // namespace
