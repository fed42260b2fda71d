// Tigris phase 1 in counting windows, XRay mode (phase1_window.h): a window counts with every sled
// patched; when it has seen Config::phase1_window_calls calls or lasted Config::phase1_window_ms,
// the cycle classifies (the thread whose batch found it over runs it, or the background tick) and
// every sled is unpatched except those of the functions the cycle selected, which phase 2 records.
// The engine's background thread opens the next window after the closed time is (1 - duty) / duty
// times the last window's length.
//
// Patching while other threads run: XRay writes each sled with one atomic store of its first
// instruction, so a thread runs either the old or the new sled; a function unpatched while it runs
// never reports its exit (hook_stack.h: leave_returned ends its frame at the thread's next call
// at its level or above, leave_unmatched at its caller's exit)
// and one patched while it runs reports an exit without an entry (ignored). Patching calls race
// with the first-call unpatching of out-of-scope functions (the runtime answers ONGOING): they
// are retried. At exit the background thread is stopped (no window opens) and a close after
// shutdown does nothing (probes are off).
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

#include "engine.h"
#include "engine_internal.h"
#include "hook_stack.h"
#include "phase1_window.h"
#include "selection_store.h"
#include "thread_annotations.h"
#include "xray_interface.h"

namespace perfhat::autoinstrument {

constinit thread_local uint32_t t_window_calls __attribute__((tls_model("initial-exec"))) = 0;
std::atomic<std::atomic<int32_t>*> g_window_countdown{nullptr};

namespace {

PERFHAT_XRAY_NOINSTR detail::WindowBound window_bound() {
  return {detail::g_phase1_window_calls.load(std::memory_order_relaxed),
          detail::g_phase1_window_ns.load(std::memory_order_relaxed)};
}

// Opening and closing, one at a time (held across the cycle's analysis: a leaf for no one).
std::mutex g_transition_mu;
std::atomic<bool> g_open{false};
std::atomic<uint64_t> g_window_calls{0};                // calls of the open window, in batches
std::atomic<uint64_t> g_window_start_ns{0};             // when the open window opened
std::atomic<uint64_t> g_last_window_ns{0};              // the last closed window's length
std::atomic<uint64_t> g_closed_at_ns{0};                // when it closed
std::atomic<size_t> g_closed{0}, g_kept{0}, g_left{0};  // tests
std::atomic<size_t> g_left_now{0};                      // functions that left the open window
// The open window's calls at the background thread's last tick (reset when a window opens).
std::atomic<uint64_t> g_calls_at_last_tick{0};
// Started between windows, from the program's last process's selection (start_carried).
std::atomic<bool> g_started_closed{false};
std::atomic<size_t> g_carried{0};  // functions patched from it (tests)
// Where the selection is written for the next process (selection_store.h), or nullptr; set at
// start-up, never freed (the exit flush writes it). A window closed since the last write: only a
// process that counted writes.
const detail::SelectionKey* g_key = nullptr;
const std::string* g_path = nullptr;
std::atomic<bool> g_dirty{false};
std::atomic<uint64_t> g_written_at_ns{0};
// Written at most this often while the process runs (at its exit if it counted since): a
// long-running program closes a window every half second at the default duty.
constexpr uint64_t kSelectionWriteNs = uint64_t{60} * 1000000000;
// A carried window longer than this is not believed (a window's length times (1 - duty) / duty
// is the run time before this process's next one: a corrupt length must not stop counting).
constexpr uint64_t kMaxCarriedWindowNs = uint64_t{600} * 1000000000;
// Taken by the analysis' scale under the engine's lock: nothing is called while it is held.
// Both never destroyed: sleds fire in static destructors, and a window may close there.
detail::Mutex g_counted_mu;
detail::CountedTime& counted() PERFHAT_REQUIRES(g_counted_mu) {
  static auto* c = new detail::CountedTime();
  return *c;
}
// Entry address -> function id of every function seen.
std::unordered_map<const void*, int32_t>& fid_of() PERFHAT_REQUIRES(g_counted_mu) {
  static auto* m = new std::unordered_map<const void*, int32_t>();
  return *m;
}
// The functions the last close kept patched (or the carried ones), ascending: what the next
// process is handed.
std::vector<uint32_t>& selected() PERFHAT_REQUIRES(g_counted_mu) {
  static auto* v = new std::vector<uint32_t>();
  return *v;
}

// Per function id (1..max), whether the cycle's relevant set holds it: functions seen in this
// process, in the scope; `seen`, when given, gets every seen function's address and id.
PERFHAT_XRAY_NOINSTR std::vector<bool> selected_functions(
    std::vector<std::pair<const void*, int32_t>>* seen = nullptr) {
  std::vector<bool> out(xray_functions() + 1, false);
  for (size_t fid = 1; fid <= xray_functions(); ++fid) {
    void* fn = xray_seen_function(static_cast<int32_t>(fid));
    if (fn == nullptr) continue;
    if (seen != nullptr) seen->emplace_back(fn, static_cast<int32_t>(fid));
    const uint32_t id = site_for(fn)->id.load(std::memory_order_relaxed);
    out[fid] = id != 0 && id != detail::kExcludedSite && detail::relevant(id);
  }
  return out;
}

// A patching call, under the patching lock (xray_interface.h); tried again while the runtime says
// another patching call runs (one not made by this library).
template <class F>
PERFHAT_XRAY_NOINSTR bool patch_retrying(F f) {
  for (int i = 0; i < 1000; ++i) {
    const XRayPatchingStatus r = patch_locked(f);
    if (r != ONGOING) return r == SUCCESS;
    sched_yield();
  }
  return false;
}

// When a closing window stopped counting (0 while none is closing): the close's analysis scales to
// it, not to when it reads the counts.
std::atomic<uint64_t> g_counts_until_ns{0};

PERFHAT_XRAY_NOINSTR double scale_of(const detail::Site& site) {
  const uint64_t until = g_counts_until_ns.load();
  const uint64_t now = until != 0 ? until : detail::steady_now_ns();
  detail::Lock l(g_counted_mu);
  auto it = fid_of().find(site.address);
  return it == fid_of().end() ? 1 : counted().scale(static_cast<size_t>(it->second), now);
}

// The cycle selects; only its functions stay patched. Every sled is unpatched before the analysis
// reads the counts: the threads' calls while it runs (it names and classifies the functions, and
// waits for the engine's lock) would add to the functions still in the window and not to those
// that left it early, whose counts are scaled up only to when counting stopped; a slow analysis
// then selected a function called an eighth as often. Kept functions record nothing while it runs.
// Without a filter every function is relevant: every sled is patched again, windows stop.
PERFHAT_XRAY_NOINSTR void close_window() {
  std::unique_lock<std::mutex> l(g_transition_mu, std::try_to_lock);
  if (!l.owns_lock() || !g_open.load()) return;
  const bool stopped = patch_retrying([] { return __xray_unpatch(); });
  const uint64_t now = detail::steady_now_ns();
  if (stopped) g_counts_until_ns.store(now);
  perfhat::analyze_now();
  g_counts_until_ns.store(0);
  const uint64_t* bits = detail::g_relevant.load(std::memory_order_acquire);
  if (bits == nullptr) {
    if (stopped) patch_retrying([] { return __xray_patch(); });
    g_open.store(false);
    return;
  }
  const size_t max_fid = xray_functions();
  std::vector<std::pair<const void*, int32_t>> seen;
  const std::vector<bool> chosen = selected_functions(&seen);
  std::vector<bool> kept = chosen;
  size_t n_kept = 0;
  if (stopped) {
    for (size_t fid = 1; fid <= max_fid; ++fid) {
      if (!kept[fid]) continue;
      const auto f = static_cast<int32_t>(fid);
      if (patch_retrying([f] { return __xray_patch_function(f); })) ++n_kept;
    }
  } else {
    kept.assign(max_fid + 1, true);  // still all patched: all still counted
    n_kept = seen.size();
  }
  uint64_t start;
  {
    detail::Lock c(g_counted_mu);
    for (const auto& [fn, fid] : seen) fid_of().emplace(fn, fid);
    start = counted().window_start();
    counted().close(now, kept);
    selected().clear();
    for (size_t fid = 1; fid <= max_fid; ++fid)
      if (chosen[fid]) selected().push_back(static_cast<uint32_t>(fid));
  }
  detail::g_phase1_carried.store(false);  // this process's own cycle has selected
  g_dirty.store(true);
  g_last_window_ns.store(now - start);
  g_closed_at_ns.store(now);
  g_kept.store(n_kept);
  g_closed.fetch_add(1);
  g_open.store(false);
}

// The calls a function gives the open window before it is checked for leaving it. 0 (also from a
// later perfhat::init, after the countdowns were allocated): never.
PERFHAT_XRAY_NOINSTR int32_t countdown_start() {
  const uint32_t k = detail::g_phase1_function_calls.load(std::memory_order_relaxed);
  return k == 0 || k > INT32_MAX ? INT32_MAX : static_cast<int32_t>(k);
}

// A function whose leave found the transition lock taken is checked again after this many exits.
constexpr int32_t kLeaveRetryCalls = 8;

// Every function may give the next window phase1_function_calls calls before it leaves it.
PERFHAT_XRAY_NOINSTR void reset_countdowns(std::atomic<int32_t>* c) {
  if (c == nullptr) return;
  const int32_t k = countdown_start();
  for (size_t fid = 0; fid <= xray_functions() + kCalibrationFids; ++fid)
    c[fid].store(k, std::memory_order_relaxed);
}

// A function that gave the open window its calls leaves it: its sleds are unpatched until the
// next window, and it is counted for the time before (CountedTime::leave). Not a function the
// last cycle selected (phase 2 records every call of it), nor outside the scope, nor before half
// the window has passed (WindowBound::may_leave: its rate before it left stands for the whole
// window). Counted once however many threads' exits reach the check together. kBusy: the lock or
// the runtime was taken by another patching call, tried again soon.
enum class Leave { kLeft, kStays, kBusy };
PERFHAT_XRAY_NOINSTR Leave leave_open_window(int32_t fid) {
  std::unique_lock<std::mutex> l(g_transition_mu, std::try_to_lock);
  if (!l.owns_lock()) return Leave::kBusy;
  if (!g_open.load()) return Leave::kStays;
  const uint64_t now = detail::steady_now_ns();
  if (!window_bound().may_leave(g_window_start_ns.load(), now, g_window_calls.load()))
    return Leave::kStays;
  void* fn = xray_seen_function(fid);
  if (fn == nullptr) return Leave::kStays;
  const uint32_t id = site_for(fn)->id.load(std::memory_order_relaxed);
  if (id == 0 || id == detail::kExcludedSite || detail::relevant(id)) return Leave::kStays;
  {
    // Room reserved at start-up (exit handlers must not throw); a failure only keeps it counted.
    detail::Lock c(g_counted_mu);
    try {
      fid_of().emplace(fn, fid);
    } catch (...) {
      return Leave::kStays;
    }
  }
  // Waits for another thread's patching call (this thread's own hooks do not reach here while it
  // patches: in_hook); one try at the runtime, checked again later if it still refuses.
  if (patch_locked([fid] { return __xray_unpatch_function(fid); }) != SUCCESS) return Leave::kBusy;
  // Counted until its sleds were unpatched, not until the check: a thread descheduled in between
  // (a loaded machine) kept counting its calls, and leaving at the check's time scaled them up.
  const uint64_t left_at = detail::steady_now_ns();
  {
    detail::Lock c(g_counted_mu);
    if (!counted().leave(static_cast<size_t>(fid), left_at)) return Leave::kLeft;
  }
  g_left.fetch_add(1);
  g_left_now.fetch_add(1);
  return Leave::kLeft;
}

// Writes down the selection for the program's next process (selection_store.h), when this process
// counted since the last write: the last close's kept functions and its window's length. A
// process that ends inside a window (`at_exit`) has its cycle select first, from what the window
// counted.
PERFHAT_XRAY_NOINSTR void write_selection(bool at_exit) {
  // Not under a configuration a later init() changed: that selection is not this key's.
  if (g_path == nullptr || detail::Engine::get().selection_config() != g_key->config) return;
  std::lock_guard<std::mutex> l(g_transition_mu);
  detail::CarriedSelection s;
  const uint64_t now = detail::steady_now_ns();
  if (g_open.load()) {
    if (!at_exit || detail::g_relevant.load(std::memory_order_acquire) == nullptr) return;
    perfhat::analyze_now();
    const std::vector<bool> chosen = selected_functions();
    for (size_t fid = 1; fid < chosen.size(); ++fid)
      if (chosen[fid]) s.functions.push_back(static_cast<uint32_t>(fid));
    s.window_ns = now - g_window_start_ns.load();
  } else {
    if (!g_dirty.load()) return;  // nothing new: a carried process that never counted
    {
      detail::Lock c(g_counted_mu);
      s.functions = selected();
    }
    s.window_ns = g_last_window_ns.load();
  }
  if (s.window_ns == 0) return;
  s.names.reserve(s.functions.size());
  for (uint32_t fid : s.functions) {
    void* fn = xray_function(static_cast<int32_t>(fid));
    s.names.push_back(fn != nullptr ? mangled_of(fn) : std::string());
  }
  ProbeCosts costs;
  if (measured_costs(costs)) {
    s.host = detail::host_identity();
    for (const auto* part : {costs.pair, costs.self, costs.sampling, costs.reference})
      s.costs.insert(s.costs.end(), part, part + kProbeKinds);
  }
  detail::write_selection_file(*g_path, detail::encode_selection(*g_key, s));
  g_dirty.store(false);
  g_written_at_ns.store(now);
}

PERFHAT_XRAY_NOINSTR void write_selection_at_exit() { write_selection(true); }

// The background thread's tick: a window past its time closes (its threads may make too few
// calls to reach a batch); a closed one reopens once the closed time is long enough.
PERFHAT_XRAY_NOINSTR void window_tick() {
  if (g_open.load()) {
    // Also closed once a function has left it and no thread's batch of calls came for a whole
    // tick: the functions still counted may make too few calls for a batch, and without a time
    // bound the window would wait for them forever (a function that left counts no call).
    const uint64_t calls = g_window_calls.load();
    const bool idle = g_left_now.load() != 0 && calls == g_calls_at_last_tick.exchange(calls);
    if (idle || window_bound().reached_time(g_window_start_ns.load(), detail::steady_now_ns()))
      close_window();
    return;
  }
  if (g_closed.load() == 0 && !g_started_closed.load()) return;
  if (g_dirty.load() && detail::steady_now_ns() - g_written_at_ns.load() >= kSelectionWriteNs)
    write_selection(false);
  const double duty = detail::g_phase1_duty.load();
  const uint64_t now = detail::steady_now_ns();
  const double due = static_cast<double>(g_last_window_ns.load()) * (1 - duty) / duty;
  if (static_cast<double>(now - g_closed_at_ns.load()) < due) return;
  std::lock_guard<std::mutex> l(g_transition_mu);
  if (g_open.load()) return;
  reset_countdowns(g_window_countdown.load(std::memory_order_acquire));
  if (!patch_retrying([] { return __xray_patch(); })) return;
  g_left_now.store(0);
  g_window_calls.store(0);
  g_calls_at_last_tick.store(0);
  const uint64_t start = detail::steady_now_ns();
  {
    detail::Lock c(g_counted_mu);
    counted().open(start);
  }
  g_window_start_ns.store(start);
  g_open.store(true);
}

// What every start needs, a window open or not: the countdowns of functions leaving a window, room
// for every function, the analysis' scale, the background thread's tick, and where the selection
// is kept for the next process.
PERFHAT_XRAY_NOINSTR void set_up_windows() {
  // Only with a filter: without one every function is relevant and stays patched.
  if (detail::g_phase1_function_calls.load() != 0 &&
      detail::g_relevant.load(std::memory_order_acquire) != nullptr) {
    // Never freed: sleds fire in static destructors. Published once filled.
    auto* countdown = new std::atomic<int32_t>[xray_functions() + 1 + kCalibrationFids]();
    reset_countdowns(countdown);
    g_window_countdown.store(countdown, std::memory_order_release);
  }
  {
    detail::Lock c(g_counted_mu);
    counted().reserve(xray_functions() + 1);
    fid_of().reserve(xray_functions() + 1);
  }
  detail::g_phase1_scale.store(&scale_of);
  detail::g_phase1_tick.store(&window_tick);
  if (detail::g_relevant.load(std::memory_order_acquire) == nullptr) return;
  detail::Engine& e = detail::Engine::get();
  std::string dir = e.selection_dir();
  if (dir.empty()) return;
  auto* key =
      new detail::SelectionKey{detail::program_identity(), e.selection_config(), xray_functions()};
  if (key->program.empty()) return;
  g_key = key;
  g_path = new std::string(detail::selection_path(dir, *key));
  detail::g_phase1_exit.store(&write_selection_at_exit);
}

// Whether this process counts a window at start-up although its program's last process left a
// selection: with probability `duty`, so that over many short processes the share of time spent
// counting is the duty (each counts for its whole life, shorter than a window) and a long one
// reopens its windows as usual. No state shared between processes, no write by those that do
// not count.
PERFHAT_XRAY_NOINSTR bool counts_at_start(double duty) {
  uint64_t x = __rdtsc() ^ (static_cast<uint64_t>(::getpid()) * 0x9E3779B97F4A7C15ull);
  x ^= x >> 33;  // splitmix64's finalizer: the TSC's low bits alone are not uniform
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return static_cast<double>(x >> 11) * 0x1.0p-53 < duty;
}

// The program's last process that counted left a selection, and this one does not count at start
// (counts_at_start): only the selected functions are patched, relevant from their first call, and
// the next window opens after (1 - duty) / duty times the carried window's length, as after a
// close at start-up. Otherwise (no file, another program or configuration, a malformed file, a
// window drawn) false: every sled is patched and a window opens.
PERFHAT_XRAY_NOINSTR bool start_carried() {
  if (g_path == nullptr) return false;
  const std::optional<std::string> text = detail::read_selection_file(*g_path);
  if (!text) return false;
  std::optional<detail::CarriedSelection> s = detail::decode_selection(*text, *g_key);
  if (!s || s->window_ns > kMaxCarriedWindowNs || counts_at_start(detail::g_phase1_duty.load()))
    return false;
  std::vector<void*> fns;
  std::vector<std::string> names;
  std::vector<bool> kept(xray_functions() + 1, false);
  for (size_t i = 0; i < s->functions.size(); ++i) {
    const uint32_t fid = s->functions[i];
    void* fn = xray_function(static_cast<int32_t>(fid));
    if (fn == nullptr) continue;
    fns.push_back(fn);
    names.push_back(std::move(s->names[i]));
    kept[fid] = true;
  }
  detail::Engine::get().carry_relevant(sites_for(fns, names));
  // The last measuring process's calibration, when it ran on this host since its boot (tick
  // counts compare): this process measures nothing. Otherwise it calibrates at its first hook.
  if (s->costs.size() == size_t{4} * kProbeKinds && !s->host.empty() &&
      s->host == detail::host_identity()) {
    ProbeCosts costs;
    size_t at = 0;
    for (auto* part : {costs.pair, costs.self, costs.sampling, costs.reference})
      for (int k = 0; k < kProbeKinds; ++k) part[k] = s->costs[at++];
    adopt_costs(costs);
  }
  size_t patched = 0;
  for (uint32_t fid : s->functions) {
    const auto f = static_cast<int32_t>(fid);
    if (kept[fid] && patch_retrying([f] { return __xray_patch_function(f); })) ++patched;
  }
  const uint64_t now = detail::steady_now_ns();
  {
    // As if a window had closed at start-up keeping these: their counts stand for the whole
    // process, the others' (from this process's own windows) are scaled up.
    detail::Lock c(g_counted_mu);
    counted().open(now);
    counted().close(now, kept);
    selected() = std::move(s->functions);
  }
  g_last_window_ns.store(s->window_ns);
  g_closed_at_ns.store(now);
  g_kept.store(patched);
  g_carried.store(patched);
  detail::g_phase1_carried.store(true);
  g_started_closed.store(true);
  return true;
}

}  // namespace

PERFHAT_XRAY_NOINSTR bool start_windows() {
  if (detail::g_phase1_window_calls.load() == 0) return false;  // phase 1 always counting
  set_up_windows();
  try {
    if (start_carried()) return true;
  } catch (const std::bad_alloc&) {
    // Counted as without a carried selection: a window opens.
  }
  if (!patch_retrying([] { return __xray_patch(); })) return false;
  const uint64_t start = detail::steady_now_ns();
  {
    detail::Lock c(g_counted_mu);
    counted().open(start);
  }
  g_window_start_ns.store(start);
  g_open.store(true);
  return true;
}

PERFHAT_XRAY_NOINSTR void window_batch() noexcept {
  if (!g_open.load(std::memory_order_relaxed)) return;
  const uint64_t n = g_window_calls.fetch_add(kWindowBatch, std::memory_order_relaxed);
  // One clock read per batch of a thread's calls, not per call.
  const detail::WindowBound bound = window_bound();
  if (!bound.reached_calls(n + kWindowBatch) &&
      !bound.reached_time(g_window_start_ns.load(std::memory_order_relaxed),
                          detail::steady_now_ns())) {
    return;
  }
  // Not from the library's own code (the engine's, or the hooks' registering a function: either
  // may hold the lock the close needs), nor once probes are off. A later batch closes it.
  ThreadStack* s = t_stack;
  if (detail::t_in_engine || (s != nullptr && s->in_hook) ||
      detail::g_mode.load() != detail::kEnabled) {
    return;
  }
  if (s != nullptr) s->in_hook = true;  // the analysis' own instrumented calls are not counted
  close_window();
  if (s != nullptr) s->in_hook = false;
}

PERFHAT_XRAY_NOINSTR void window_leave(int32_t fid) noexcept {
  std::atomic<int32_t>* c = g_window_countdown.load(std::memory_order_acquire);
  // The calibration's ids, or functions while no window is open (the kept ones): checked again
  // after as many calls.
  const bool program = static_cast<size_t>(fid) <= xray_functions();
  c[fid].store(program ? countdown_start() : INT32_MAX, std::memory_order_relaxed);
  if (!program || !g_open.load(std::memory_order_relaxed)) return;
  // 0 given by a later perfhat::init: the countdown it ran down was start-up's.
  if (detail::g_phase1_function_calls.load(std::memory_order_relaxed) == 0) return;
  // As window_batch: not from the library's own code, nor once probes are off.
  ThreadStack* s = t_stack;
  if (detail::t_in_engine || (s != nullptr && s->in_hook) ||
      detail::g_mode.load() != detail::kEnabled) {
    return;
  }
  if (s != nullptr) s->in_hook = true;
  switch (leave_open_window(fid)) {
    case Leave::kLeft:
      c[fid].store(INT32_MAX, std::memory_order_relaxed);
      break;
    case Leave::kBusy:
      // Another function's leave or the close held the lock: checked again soon, not after a
      // whole countdown (functions called alike come due together, and one leaves at a time).
      c[fid].store(std::min(countdown_start(), kLeaveRetryCalls), std::memory_order_relaxed);
      break;
    case Leave::kStays:
      break;
  }
  if (s != nullptr) s->in_hook = false;
}

PERFHAT_XRAY_NOINSTR size_t windows_closed() { return g_closed.load(); }
PERFHAT_XRAY_NOINSTR size_t window_left() { return g_left.load(); }
PERFHAT_XRAY_NOINSTR size_t window_kept() { return g_kept.load(); }
PERFHAT_XRAY_NOINSTR size_t window_carried() { return g_carried.load(); }

}  // namespace perfhat::autoinstrument
