// Built by xray_test.sh with clang++ -fxray-instrument and linked with perfhat::xray: no probe
// macro, every function gets an XRay sled; prints what libperfhat recorded.
#include <dirent.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "perfhat/memory_exporter.hpp"
#include "perfhat/perfhat.hpp"
#include "symbolize.h"
#include "tests/nested_workload.h"
#include "xray_interface.h"

namespace perfhat::autoinstrument {
size_t xray_unpatched();
bool xray_address_map();
size_t xray_functions();
size_t windows_closed();
size_t window_kept();
size_t window_left();
size_t window_carried();
bool costs_measured_here();
}  // namespace perfhat::autoinstrument

namespace xapp {
__attribute__((noinline)) int leaf(int x) { return x * 3; }
__attribute__((noinline)) int middle(int x) { return leaf(x) + leaf(x + 1); }
__attribute__((noinline)) int skipped(int x) { return x - 1; }
// XRay reports no exit for a function left by an exception: thrower's frame stays open until
// catcher's exit closes it, and after() is a root again.
__attribute__((noinline)) int thrower(int x) {
  if (x >= 0) throw x;
  return x;
}
__attribute__((noinline)) int catcher(int x) {
  try {
    return thrower(x);
  } catch (int e) {
    return e + 1;
  }
}
__attribute__((noinline)) int after(int x) { return x + 2; }
}  // namespace xapp

// The nested workload of InstrAutoInstrument.CompensatedNestedWorkload..., with XRay sleds and
// children four times as long (an XRay pair costs about three -finstrument-functions pairs).
namespace xnest {
__attribute__((noinline)) int child(int x) {
  unsigned s = static_cast<unsigned>(x);
  for (int i = 0; i < 64; ++i) {
    s = s * 31 + i;
    asm volatile("" : "+r"(s));  // no folding the loop
  }
  return static_cast<int>(s & 0x7fffffffu);
}
__attribute__((noinline)) int parent(int x) {
  unsigned s = 0;
  for (int i = 0; i < 32; ++i) s += static_cast<unsigned>(child(i + x));
  return static_cast<int>(s & 0x7fffffffu);
}
}  // namespace xnest

PERFHAT_TEST_NOINSTR int32_t xray_id_of(const void* fn) {
  const size_t n = __xray_max_function_id();
  for (size_t fid = 1; fid <= n; ++fid) {
    if (__xray_function_address(static_cast<int32_t>(fid)) == reinterpret_cast<uintptr_t>(fn))
      return static_cast<int32_t>(fid);
  }
  return 0;
}

// Patches or unpatches one function's sleds; retried while another thread is patching (a
// counting window's close).
PERFHAT_TEST_NOINSTR bool set_patched(int32_t fid, bool on) {
  for (int i = 0; i < 100000; ++i) {
    const XRayPatchingStatus r = perfhat::autoinstrument::patch_locked(
        [&] { return on ? __xray_patch_function(fid) : __xray_unpatch_function(fid); });
    if (r != ONGOING) return r == SUCCESS;
    std::this_thread::yield();
  }
  return false;
}

// `xray_app nested`: the parent's reported median against its median with the parent's and the
// child's sleds unpatched (the same code at the same addresses: a copy elsewhere ran twice as
// slow as the original in some runs, code placement the measurement is not about), as the error
// in percent (compensation as PERFHAT_COMPENSATE says).
PERFHAT_TEST_NOINSTR int nested_main() {
  perfhat::Config c = perfhat::Config::from_env();
  c.endpoint.clear();
  perfhat::init(c, std::make_shared<perfhat::MemoryExporter>());
  const int32_t ids[] = {xray_id_of(reinterpret_cast<void*>(&xnest::parent)),
                         xray_id_of(reinterpret_cast<void*>(&xnest::child))};
  bool switched = ids[0] != 0 && ids[1] != 0, patched = true;
  auto instrument = [&](bool on) {
    if (on == patched) return;
    for (const int32_t fid : ids) switched = set_patched(fid, on) && switched;
    patched = on;
  };
  int x = 0;
  const auto t = perfhat::testing::time_nested(
      reinterpret_cast<void*>(&xnest::parent), [&x] { return xnest::parent(++x); },
      [&x] { return xnest::parent(++x); }, 6000, instrument);
  instrument(true);
  if (const auto* costs = perfhat::autoinstrument::probe_costs()) {
    std::printf("calibrated pair ticks: skipped %.1f counted %.1f clocked %.1f\n",
                costs->pair[0] / 256.0, costs->pair[1] / 256.0, costs->pair[2] / 256.0);
  }
  perfhat::shutdown();
  std::printf("nested error %.0f %% (uninstrumented %.0f ticks, reported %.0f ticks, %zu timed)\n",
              (t.reported_median / t.plain_median - 1) * 100, t.plain_median, t.reported_median,
              t.reported_calls);
  if (!switched) std::printf("could not patch or unpatch xnest's sleds\n");
  return switched && t.reported_calls > 100 ? 0 : 1;
}

// Tigris phase 1 in a counting window: hot() is called eight times as often as each cold
// function, so "most frequent" selects it alone.
namespace xwin {
__attribute__((noinline)) int hot(int x) { return x * 5 + 1; }
__attribute__((noinline)) int cold0(int x) { return x ^ 0x10; }
__attribute__((noinline)) int cold1(int x) { return x ^ 0x20; }
__attribute__((noinline)) int cold2(int x) { return x ^ 0x30; }
__attribute__((noinline)) int cold3(int x) { return x ^ 0x40; }
__attribute__((noinline)) int cold4(int x) { return x ^ 0x50; }
__attribute__((noinline)) int cold5(int x) { return x ^ 0x60; }
__attribute__((noinline)) int cold6(int x) { return x ^ 0x70; }
}  // namespace xwin
PERFHAT_TEST_NOINSTR int window_round(int x) {
  int s = 0;
  for (int i = 0; i < 8; ++i) s += xwin::hot(x + i);
  return s + xwin::cold0(x) + xwin::cold1(x) + xwin::cold2(x) + xwin::cold3(x) + xwin::cold4(x) +
         xwin::cold5(x) + xwin::cold6(x);
}

// `xray_app window`: four threads call until the first counting window has closed (the close
// patches while the others run sleds), then 500 rounds each; prints the phase-1 counts of the
// second part, which sees only the sleds left patched.
// `xray_app window-idle`: each thread makes 4 rounds (60 calls, fewer than a thread's batch of
// 256, so no call ever checks the window) and waits for the background thread's tick to close it
// by time; then the same 500 rounds each.
// `xray_app window-leave`: as `window`, and prints how many functions left the window early.
// `xray_app window-leave-later0`: as `window-leave`, with perfhat::init given
// phase1_function_calls = 0 after start-up set the countdowns from the environment.
PERFHAT_TEST_NOINSTR int window_main(bool idle, bool show_left, bool later_zero = false) {
  auto ex = std::make_shared<perfhat::MemoryExporter>();
  perfhat::Config c = perfhat::Config::from_env();
  c.endpoint.clear();
  if (later_zero) c.phase1_function_calls = 0;
  perfhat::init(c, ex);
  constexpr int kThreads = 4, kRoundsAfter = 500;
  std::atomic<int> sink{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&sink, t, idle] {
      if (idle) {
        for (int r = 0; r < 4; ++r) sink += window_round(r + t);
        for (int i = 0; i < 6000 && perfhat::autoinstrument::windows_closed() == 0; ++i)
          std::this_thread::sleep_for(std::chrono::milliseconds(5));  // polls; bounded at 30 s
        return;
      }
      // Until the window closes (bounded at 30 s): by its calls, or at the background thread's
      // tick once its functions have all left it.
      const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
      for (int64_t r = 0; perfhat::autoinstrument::windows_closed() == 0; ++r) {
        sink += window_round(static_cast<int>(r & 0xffff) + t);
        if (r % 1024 == 0 && std::chrono::steady_clock::now() > until) break;
      }
    });
  }
  for (auto& th : threads) th.join();
  threads.clear();
  perfhat::flush();
  ex->clear();
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&sink, t] {
      for (int r = 0; r < kRoundsAfter; ++r) sink += window_round(r + t);
    });
  }
  for (auto& th : threads) th.join();
  perfhat::flush();
  std::map<std::string, uint64_t> after;
  for (const auto& a : ex->aggregates()) after[a.function] += a.count;
  uint64_t cold = 0;
  for (const auto& [fn, n] : after) {
    if (fn.find("xwin::cold") != std::string::npos) cold += n;
  }
  std::printf("closed=%zu kept=%zu hot_after=%llu cold_after=%llu",
              perfhat::autoinstrument::windows_closed(), perfhat::autoinstrument::window_kept(),
              static_cast<unsigned long long>(after["xwin::hot(int)"]),
              static_cast<unsigned long long>(cold));
  if (show_left) std::printf(" left=%zu", perfhat::autoinstrument::window_left());
  std::printf("\n");
  perfhat::shutdown();
  return 0;
}

// `xray_app carry`: four threads make 500 rounds each, and it prints what was recorded and
// whether the process started from the selection its program's last process left
// (selection_store.h): then only hot() is patched and relevant from its first call, and no
// window opens while the duty cycle keeps it closed. A process that ends inside its window
// leaves the selection its cycle makes at exit. calibrated=0: the hooks' costs came with the
// selection (the last measuring process's, on this host), not measured here. tables: symbol
// tables read (0 when the carried functions' names came with the selection).
PERFHAT_TEST_NOINSTR int carry_main() {
  auto ex = std::make_shared<perfhat::MemoryExporter>();
  perfhat::Config c = perfhat::Config::from_env();
  c.endpoint.clear();
  perfhat::init(c, ex);  // the environment's configuration: a carried selection stays
  std::atomic<int> sink{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&sink, t] {
      for (int r = 0; r < 500; ++r) sink += window_round(r + t);
    });
  }
  for (auto& th : threads) th.join();
  perfhat::flush();
  uint64_t hot = 0, cold = 0;
  for (const auto& a : ex->aggregates()) {
    if (a.function == "xwin::hot(int)") hot += a.count;
    if (a.function.find("xwin::cold") != std::string::npos) cold += a.count;
  }
  std::printf("carried=%zu closed=%zu hot=%llu cold=%llu calibrated=%d tables=%zu\n",
              perfhat::autoinstrument::window_carried(), perfhat::autoinstrument::windows_closed(),
              static_cast<unsigned long long>(hot), static_cast<unsigned long long>(cold),
              perfhat::autoinstrument::costs_measured_here() ? 1 : 0,
              perfhat::symbolize::tables_read());
  return 0;
}

// The process's threads (/proc/self/task).
PERFHAT_TEST_NOINSTR int threads_now() {
  int n = 0;
  if (DIR* d = opendir("/proc/self/task")) {
    while (const dirent* e = readdir(d)) n += e->d_name[0] != '.';
    closedir(d);
  }
  return n;
}

// `xray_app carry-thread`: no perfhat::init() (the library starts as in a program without source
// changes). The threads before any call; then calls on this thread for 300 ms and the threads
// again: a process started from a carried selection starts the engine's background thread on
// demand (at the first recorded call once its first tick or export is due), one that counts
// starts it at once.
PERFHAT_TEST_NOINSTR int carry_thread_main() {
  const int before = threads_now();
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
  std::atomic<int> sink{0};
  for (int r = 0; std::chrono::steady_clock::now() < until; ++r) sink += window_round(r);
  std::printf("carried=%zu threads_before=%d threads_after=%d\n",
              perfhat::autoinstrument::window_carried(), before, threads_now());
  return 0;
}

// A worker's loop that does not return while calls under it return unreported: step() returns
// with every sled unpatched (what a counting window's close does between __xray_unpatch and
// re-patching the functions it keeps), and the loop patches them again. More steps than a
// thread's kMaxDepth frames.
namespace xstale {
__attribute__((noinline)) int leaf(int x) { return x + 7; }
__attribute__((noinline)) int step(int x) {
  __xray_unpatch();  // this call's exit is not reported
  return x * 2;
}
__attribute__((noinline)) int probe(int x) { return leaf(x) + 1; }
__attribute__((noinline)) int loop(int n) {
  int s = 0;
  for (int i = 0; i < n; ++i) {
    s += step(i);
    __xray_patch();
  }
  return s + probe(n);
}
}  // namespace xstale

// `xray_app stale`: on a thread of its own, loop(300); prints the spans recorded: every step and
// probe() a child of loop (no step left open under the next call), leaf() a child of probe().
PERFHAT_TEST_NOINSTR int stale_main() {
  auto ex = std::make_shared<perfhat::MemoryExporter>();
  perfhat::Config c = perfhat::Config::from_env();
  c.endpoint.clear();
  perfhat::init(c, ex);
  constexpr int kSteps = 300;
  int total = 0;
  std::thread([&total] { total = xstale::loop(kSteps); }).join();
  perfhat::flush();
  uint64_t loop_id = 0, probe_id = 0;
  for (const auto& sp : ex->spans()) {
    if (sp.function == "xstale::loop(int)") loop_id = sp.span_id;
    if (sp.function == "xstale::probe(int)") probe_id = sp.span_id;
  }
  int steps = 0, steps_under_loop = 0, probes_under_loop = 0, leaves_under_probe = 0;
  for (const auto& sp : ex->spans()) {
    if (sp.function == "xstale::step(int)") {
      ++steps;
      steps_under_loop += loop_id != 0 && sp.parent_span_id == loop_id;
    }
    probes_under_loop +=
        sp.function == "xstale::probe(int)" && loop_id != 0 && sp.parent_span_id == loop_id;
    leaves_under_probe +=
        sp.function == "xstale::leaf(int)" && probe_id != 0 && sp.parent_span_id == probe_id;
  }
  std::printf(
      "total=%d loop=%d steps=%d steps_under_loop=%d probe_under_loop=%d leaf_under_probe=%d\n",
      total, loop_id != 0, steps, steps_under_loop, probes_under_loop, leaves_under_probe);
  perfhat::shutdown();
  return 0;
}

// `xray_app addresses`: the one-pass map of every function's address (read at start-up)
// against XRay's own look-up of each id.
PERFHAT_TEST_NOINSTR int addresses_main() {
  const size_t n = perfhat::autoinstrument::xray_functions();
  const uintptr_t* map = perfhat::autoinstrument::xray_function_addresses(n);
  size_t mismatches = 0;
  for (size_t fid = 1; map != nullptr && fid <= n; ++fid)
    mismatches += map[fid] != __xray_function_address(static_cast<int32_t>(fid));
  std::printf("map=%d functions=%zu mismatches=%zu\n",
              perfhat::autoinstrument::xray_address_map() && map != nullptr, n, mismatches);
  return 0;
}

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "addresses") return addresses_main();
  if (argc > 1 && std::string(argv[1]) == "stale") return stale_main();
  if (argc > 1 && std::string(argv[1]) == "nested") return nested_main();
  if (argc > 1 && std::string(argv[1]) == "window") return window_main(false, false);
  if (argc > 1 && std::string(argv[1]) == "window-idle") return window_main(true, false);
  if (argc > 1 && std::string(argv[1]) == "window-leave") return window_main(false, true);
  if (argc > 1 && std::string(argv[1]) == "carry") return carry_main();
  if (argc > 1 && std::string(argv[1]) == "carry-thread") return carry_thread_main();
  if (argc > 1 && std::string(argv[1]) == "window-leave-later0")
    return window_main(false, true, true);
  auto ex = std::make_shared<perfhat::MemoryExporter>();
  perfhat::Config c = perfhat::Config::from_env();
  c.endpoint.clear();
  perfhat::init(c, ex);
  int total = 0;
  for (int i = 0; i < 100; ++i) total += xapp::middle(i) + xapp::skipped(i);
  total += xapp::catcher(1);
  total += xapp::after(1);
  perfhat::flush();
  std::map<std::string, int> spans;
  uint64_t middle_id = 0, last_leaf_parent = 0, after_parent = 1;
  for (const auto& s : ex->spans()) {
    ++spans[s.function];
    if (s.function == "xapp::middle(int)") middle_id = s.span_id;
    if (s.function == "xapp::leaf(int)") last_leaf_parent = s.parent_span_id;
    if (s.function == "xapp::after(int)") after_parent = s.parent_span_id;
  }
  // unwound: catcher's span ended and after() is a root (the thrower's frame was closed).
  std::printf(
      "total=%d leaf=%d middle=%d skipped=%d nested=%d unwound=%d functions=%zu unpatched=%zu\n",
      total, spans["xapp::leaf(int)"], spans["xapp::middle(int)"], spans["xapp::skipped(int)"],
      middle_id != 0 && last_leaf_parent == middle_id,
      spans["xapp::catcher(int)"] == 1 && spans["xapp::after(int)"] == 1 && after_parent == 0,
      perfhat::autoinstrument::xray_functions(), perfhat::autoinstrument::xray_unpatched());
  perfhat::shutdown();
}
