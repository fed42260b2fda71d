// What the XRay mode's files share: compiler-rt's XRay interface, declared here rather than
// included (any compiler builds these files; only the program they are linked into is built with
// Clang and XRay), and the handler's function table (xray_hooks.cc).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>

extern "C" {
enum XRayEntryType { ENTRY = 0, EXIT = 1, TAIL = 2, LOG_ARGS_ENTRY = 3 };
enum XRayPatchingStatus { NOT_INITIALIZED = 0, SUCCESS = 1, ONGOING = 2, FAILED = 3 };
int __xray_set_handler(void (*entry)(int32_t, XRayEntryType));
XRayPatchingStatus __xray_patch();
XRayPatchingStatus __xray_unpatch();
XRayPatchingStatus __xray_patch_function(int32_t fid);
XRayPatchingStatus __xray_unpatch_function(int32_t fid);
uintptr_t __xray_function_address(int32_t fid);
size_t __xray_max_function_id();
void __xray_FunctionEntry();  // the runtime's trampolines (called by patched sleds)
void __xray_FunctionExit();
}

#define PERFHAT_XRAY_NOINSTR __attribute__((no_instrument_function, xray_never_instrument))

namespace perfhat::autoinstrument {

// compiler-rt 14's __xray_patch_function and __xray_unpatch_function make the function's pages
// writable, and read-only again on return, outside the runtime's own guard against concurrent
// patching: a call that finds another one running returns ONGOING but still makes its pages
// read-only under the other's writes (SIGSEGV in patchFunctionExit, 3 of 300 runs of
// instr_xray_test's window-leave-later0 with four loops at once). So every patching call of this
// library goes through one lock: `op` under it, or ONGOING without waiting when `wait` is false
// (a first call's unpatching, which is tried again at a later call and does not mark the thread
// as in a hook: a signal handler's hooks on the thread that holds the lock must not wait for it).
std::mutex& patching_mutex();
template <class F>
PERFHAT_XRAY_NOINSTR inline XRayPatchingStatus patch_locked(F op, bool wait = true) {
  std::unique_lock<std::mutex> l(patching_mutex(), std::defer_lock);
  if (wait) {
    l.lock();
  } else if (!l.try_lock()) {
    return ONGOING;
  }
  return op();
}

// Ids past the program's highest, used by the start-up calibration (its keys: counted or timed,
// skipped, counted by a probe).
inline constexpr size_t kCalibrationFids = 3;
// The program's highest XRay function id (0: not built with -fxray-instrument, or probes off).
size_t xray_functions();
// The entry address of function `fid` if a call of it was seen, else nullptr (no look-up).
void* xray_seen_function(int32_t fid);
// The entry address of function `fid` (looked up and remembered), nullptr for no such id.
void* xray_function(int32_t fid);
// Every function's entry address, indexed by id (1..max_fid), read from the program's sled map
// in one pass (xray_function_map.cc); nullptr when the map cannot be read (then ask
// __xray_function_address). Never freed.
const uintptr_t* xray_function_addresses(size_t max_fid);

// Tigris phase 1 in counting windows (xray_window.cc, phase1_window.h).
// At start-up, with the handler set: with a Tigris filter, either patches every sled and opens the
// first window, or patches only the selection carried from the program's last process
// (selection_store.h) and opens a window when one is due. False when windows are off (phase 1
// always counting) or patching failed: the caller patches every sled.
bool start_windows();
// Calls are counted per thread and added to the window in batches (one shared counter per call
// would be a contended line); the window closes at the batch that reaches its length.
inline constexpr uint32_t kWindowBatch = 256;
extern constinit thread_local uint32_t t_window_calls __attribute__((tls_model("initial-exec")));
void window_batch() noexcept;
// Counts one instrumented call toward the open window (the handler's entry).
[[gnu::always_inline]] PERFHAT_XRAY_NOINSTR inline void count_window_call() noexcept {
  if ((++t_window_calls & (kWindowBatch - 1)) == 0) [[unlikely]]
    window_batch();
}
// A function leaves the open window early (phase1_function_calls): per function id, the exits
// it may still give before the next check (xray_window.cc), or nullptr when no function leaves.
// Sized for the calibration's ids too; their countdowns never reach a check that does anything.
extern std::atomic<std::atomic<int32_t>*> g_window_countdown;
void window_leave(int32_t fid) noexcept;
// Counts one exit of function `fid` (the handler's exit: the function is unpatched as this call
// returns, so this call's exit is reported; its outer recursive frames and its calls in flight on
// other threads still lose theirs, which hook_stack.h's leave_returned/leave_unmatched end).
[[gnu::always_inline]] PERFHAT_XRAY_NOINSTR inline void count_function_exit(int32_t fid) noexcept {
  std::atomic<int32_t>* c = g_window_countdown.load(std::memory_order_acquire);
  if (c == nullptr) return;
  // Not an atomic decrement: a lost update under contention only delays the check, and two
  // threads reaching it together leave once (CountedTime::leave says which one left).
  const int32_t left = c[fid].load(std::memory_order_relaxed) - 1;
  c[fid].store(left, std::memory_order_relaxed);
  if (left <= 0) [[unlikely]]
    window_leave(fid);
}
// Windows closed so far, functions left patched by the last close, and functions that left a
// window early (tests).
size_t windows_closed();
size_t window_kept();
size_t window_left();
// Functions patched at start-up from a carried selection (0: the process started counting).
size_t window_carried();

}  // namespace perfhat::autoinstrument
