#include "hook_stack.h"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "engine.h"
#include "site_table.h"
#include "symbolize.h"

namespace perfhat::detail {

uint64_t begin_span(Hot* h) noexcept;
uint64_t begin_call(Hot* h, uint32_t site) noexcept;

struct HookProbe {
  // The probe of a call the hooks counted (count_only): its rare exit work runs as it ends.
  PERFHAT_NOINSTR static void end_counted(Slot* slot, Hot* h, Site* site) noexcept {
    Probe p(slot, h, site);
  }
  // Forces a clocked probe to record, as Probe::begin does for a sampled call (calibration only:
  // a real call's kind is the sampler's and the filter's decision).
  PERFHAT_NOINSTR static void record(Probe& p) noexcept {
    if (g_aggregate_export.load(std::memory_order_relaxed)) {
      p.parent_ = begin_call(p.hot_, static_cast<uint32_t>(p.slot_ - p.hot_->slots));
      p.flags_ |= Probe::kRecording | Probe::kAggregate;
    } else {
      p.parent_ = begin_span(p.hot_);
      p.flags_ |= Probe::kRecording;
    }
    p.result_size_ = -1;
    p.loop_iterations_ = -1;
  }
};

}  // namespace perfhat::detail

namespace perfhat::autoinstrument {
namespace {

using detail::Site;

constexpr uint32_t kSampleBatch = ThreadStack::kSampleBatch;

// The median of a kind's samples: an interrupt or a preemption inside the hooks is not their cost,
// and a few of them move a mean of 63 samples by more than the difference being measured.
PERFHAT_NOINSTR uint64_t sample_median(ThreadStack& s, ProbeKind kind) {
  const uint32_t n = std::min(s.sampled_n[kind], kSampleBatch);
  if (n == 0) return 0;
  uint16_t* v = s.samples[kind];
  std::nth_element(v, v + n / 2, v + n);
  return v[n / 2];
}

// ---- Address -> Site ------------------------------------------------------------------------
// The lock-free table (site_table.h, written under g_mu); the map behind it holds every Site
// and takes over when the table cannot grow.
constinit SiteTable::Entry g_first_sites[SiteTable::kFirstLevelSize];
constinit SiteTable g_table{g_first_sites};
detail::Mutex g_mu;
std::unordered_map<void*, Site*>& sites() PERFHAT_REQUIRES(g_mu) {
  static auto* m = new std::unordered_map<void*, Site*>();  // never destroyed: hooks run at exit
  return *m;
}

PERFHAT_NOINSTR Site* table_find(void* fn) { return g_table.find(fn); }

// A new site for function `fn`, named by `sym`. Sites live for the whole process (probes
// reference them).
PERFHAT_NOINSTR Site* add_site(void* fn, const symbolize::Symbol& sym) PERFHAT_REQUIRES(g_mu) {
  const char* name = strdup(sym.demangled.empty() ? "?" : sym.demangled.c_str());
  auto* site = new Site(nullptr, name, "", 0, detail::kFunction);
  site->address = fn;
  site->mangled = sym.mangled.empty() ? nullptr : strdup(sym.mangled.c_str());
  sites().emplace(fn, site);
  g_table.insert(fn, site);
  return site;
}

PERFHAT_NOINSTR Site* register_site(void* fn) {
  detail::Lock l(g_mu);
  auto it = sites().find(fn);
  if (it != sites().end()) return it->second;
  return add_site(fn, symbolize::resolve(fn));
}

// ---- Per-thread stacks ----------------------------------------------------------------------
thread_local bool t_stack_dead = false;
struct StackGuard {
  PERFHAT_NOINSTR ~StackGuard() {
    t_stack_dead = true;
    // Frames still open (thread exiting mid-call) are abandoned, not destroyed: their exits
    // will never come.
    delete t_stack;
    t_stack = nullptr;
  }
};
thread_local StackGuard t_stack_guard;

// ---- Calibration ----------------------------------------------------------------------------
PERFHAT_NOINSTR uint64_t ticks() { return detail::now_ticks(); }
PERFHAT_NOINSTR void calibration_marker() {}

// Runs real hook calls on a stack, thread state and slots of its own, so nothing it does is
// counted or exported: site 1 is the calibration's slot, the skipped site is out of scope.
class HookCalibration final : public CalibrationTarget {
 public:
  PERFHAT_NOINSTR HookCalibration() {
    ts_.hot.slots = slots_;
    ts_.hot.capacity = 2;
    ts_.hot.owner = &ts_;
    ts_.hot.rng = 0x9E3779B97F4A7C15ull;
    ts_.hot.eh_uncaught = &kZero;
    ts_.hot.in_request = true;  // phase 1 only, unless run_pair forces the recording
    ts_.hot.request_sampled = false;
    ts_.self_timing_on = false;  // warm loops: not the in-situ cost (probe_self_timing.h)
    ts_.ring = detail::SpanRing(16);
    ts_.ring_mask = 15;
    ts_.calls = calls_;
    ts_.calls_mask = 15;
    site_.id.store(1);
    skipped_.id.store(detail::kExcludedSite);
    // Hook sites, as the program's are: the probe takes their path (macro_compensation.h leaves
    // them to this stack), and a program without probe macros never needs the macros' costs.
    site_.address = fn_;
    skipped_.address = skipped_fn_;
    full_.address = full_fn_;
    full_.id.store(1);
    stack_->costs = &kNoCosts;
    stack_->adapt = false;
    stack_->sample_countdown = UINT32_MAX;  // armed by run() in the sampling pass only
    stack_->cache[ThreadStack::cache_index(fn_)] = {fn_, &site_};
    stack_->cache[ThreadStack::cache_index(skipped_fn_)] = {skipped_fn_, &skipped_};
    stack_->cache[ThreadStack::cache_index(full_fn_)] = {full_fn_, &full_};
  }
  PERFHAT_NOINSTR void run_pair(ProbeKind kind) override { run(kind, true); }
  PERFHAT_NOINSTR void run_harness() override { run(kCounted, false); }
  PERFHAT_NOINSTR void reset_self() override {
    slots_[1].timed.store(0);
    slots_[1].sum_ticks.store(0);
  }
  PERFHAT_NOINSTR uint64_t self_ticks(ProbeKind kind) override {
    const uint64_t n = slots_[1].timed.load();
    if (kind < kClocked || n == 0) return 0;
    return (slots_[1].sum_ticks.load() << kCostShift) / n;
  }
  // The sampling pass: every call samples its hooks (their cost, and the reference times).
  PERFHAT_NOINSTR void set_sampling(bool on) {
    sampling_ = on;
    for (int k = 0; k < kProbeKinds; ++k) stack_->sampled_n[k] = 0;
  }
  // The median sampled hook time of `kind` in the sampling pass (raw sampling-clock ticks).
  PERFHAT_NOINSTR uint64_t sampled_median(ProbeKind kind) const {
    return sample_median(*stack_, kind);
  }
  detail::Hot* hot() { return &ts_.hot; }
  ThreadStack* stack() { return stack_.get(); }

 private:
  // One empty instrumented call of `kind`; without `hooks`, the same steps around no call.
  PERFHAT_NOINSTR void run(ProbeKind kind, bool hooks) {
    detail::Slot& slot = slots_[1];
    if (sampling_ && hooks) stack_->sample_countdown = 1;
    switch (kind) {
      case kSkipped:
        if (hooks) {
          call_enter(skipped_fn_);
          call_exit(skipped_fn_);
        } else {
          call_none(skipped_fn_);
          call_none(skipped_fn_);
        }
        return;
      case kCounted:
      case kCountedFull:
        slot.countdown = 1u << 30;
        break;
      case kClocked:
      case kRecorded:
        slot.countdown = 0;
        break;
      case kProbeKinds:
        return;
    }
    // kCounted: count_only's path whatever the program's relevant set holds (this thread is in
    // a request not drawn). kCountedFull: the same slot through a key count_only leaves to the
    // probe (a kScope site).
    void* fn = kind == kCountedFull ? full_fn_ : fn_;
    if (!hooks) {
      call_none(fn);
      call_none(fn);
    } else {
      call_enter(fn);
      // No frame when probes were turned off meanwhile (the measurement is then discarded): the
      // frames are default-initialized, so an unpushed one is never read.
      if (kind == kRecorded && stack_->top != stack_->frames) {
        detail::Probe& p = *stack_->frames[0].probe();
        if (p.clocked()) {
          detail::HookProbe::record(p);
          stack_->frames[0].kind = kRecorded;  // the sample is a recorded call's
        }
      }
      call_exit(fn);
    }
    // Empty the private rings: every recorded call lands in the same entries.
    ts_.head.store(0, std::memory_order_relaxed);
    ts_.tail.store(0, std::memory_order_relaxed);
    ts_.calls_head.store(0, std::memory_order_relaxed);
    ts_.calls_tail.store(0, std::memory_order_relaxed);
    ts_.calls_tail_seen = 0;
  }
  // Through the compiler hooks when they are linked (the thread's stack is this calibration's
  // while it runs), else straight to the frame work.
  PERFHAT_NOINSTR void call_enter(void* fn) {
    if (g_hook_enter != nullptr) return g_hook_enter(fn);
    enter(*stack_, fn);
  }
  // What calling a hook through the pointers costs beyond the one call a compiled hook makes (the
  // pointer, the wrapper): the harness makes this call where run_pair calls a hook.
  PERFHAT_NOINSTR void call_none(void* fn) {
    if (g_hook_enter != nullptr) g_hook_none(fn);
  }
  PERFHAT_NOINSTR void call_exit(void* fn) {
    if (g_hook_exit != nullptr) return g_hook_exit(fn);
    leave(*stack_, fn);
  }
  bool sampling_ = false;
  static constexpr unsigned kZero = 0;
  static constexpr ProbeCosts kNoCosts{};
  alignas(64) detail::Slot slots_[2];
  detail::CallRecord calls_[16] = {};
  detail::ThreadState ts_;
  // Default-initialized, as a thread's own (thread_stack_slow): frames are written when pushed.
  std::unique_ptr<ThreadStack> stack_{new ThreadStack};
  void* fn_ = reinterpret_cast<void*>(&calibration_marker);
  // The skipped site's key is never called, only looked up in the pre-seeded cache: one cache
  // line after the marker, so the two can never share a cache slot (two empty functions can sit
  // in the same 16 bytes, and then the calibration timed the skipped path: layout-dependent).
  void* skipped_fn_ = static_cast<char*>(fn_) + (std::size_t{1} << 4);
  void* full_fn_ = static_cast<char*>(fn_) + (std::size_t{2} << 4);
  Site site_{nullptr, "perfhat.calibration", "", 0, detail::kFunction};
  Site skipped_{nullptr, "perfhat.calibration.skipped", "", 0, detail::kFunction};
  Site full_{nullptr, "perfhat.calibration.full", "", 0, detail::kScope};
};

std::once_flag g_calibrated;

// PERFHAT_COMPENSATE_IN_CONTEXT=1: in-context sampling on (experimental, off by default: on the
// autobench it moved Db::get/put/scan's reported medians closer to the uninstrumented ones in
// some runs and further in others, and on the tight loop of InstrAutoInstrument's nested
// workload it over-compensated by 16-20 %; bench/README.md). A function, not a global: hooks
// run before this file's static initializers may.
PERFHAT_NOINSTR bool in_context_sampling() {
  static const bool on = [] {
    const char* v = std::getenv("PERFHAT_COMPENSATE_IN_CONTEXT");
    return v != nullptr && std::strcmp(v, "1") == 0;
  }();
  return on;
}

// Loops per kind and calls per loop of the start-up calibration: the cheapest of 7 loops of 50
// calls (a loop lasts a few microseconds, so a preempted one is rare and only ever slower). At 7
// x 100 the calibration was 2.2 M instructions of every XRay process's start-up (9 x 200: 2.8 M
// with GCC); 50 calls moved the compensated nested workload's error by less than its run-to-run
// spread (InstrAutoInstrument.CompensatedNestedWorkloadReportsItsUninstrumentedTime, 3 x 30
// runs each, medians -2 % to -6 % either way).
// A kind stops after 3 loops once two of them agree within 1/32 (probe_calibration.h): on a
// quiet machine 3 loops, not 7 (0.6 M of the 1.3 M instructions every XRay process spent at its
// first hook); a loaded one runs up to 7.
constexpr int kCalibrationCalls = 50;
constexpr int kCalibrationTrials = 7;
constexpr int kCalibrationMinTrials = 3;

// Probes must be on (the calibration runs the real probe code); otherwise the costs stay.
PERFHAT_NOINSTR ProbeCosts measure(const ProbeCosts& current) {
  if (detail::g_mode.load() != detail::kEnabled) return current;
  auto cal = std::make_unique<HookCalibration>();
  detail::Hot* saved = detail::t_hot;
  ThreadStack* saved_stack = t_stack;
  detail::t_hot = cal->hot();
  t_stack = cal->stack();
  ProbeCosts c =
      calibrate(*cal, &ticks, kCalibrationCalls, kCalibrationTrials, kCalibrationMinTrials);
  if (!in_context_sampling()) {
    t_stack = saved_stack;
    detail::t_hot = saved;
    return detail::g_mode.load() == detail::kEnabled ? c : current;
  }
  cal->set_sampling(true);
  const ProbeCosts sampled =
      calibrate(*cal, &ticks, kCalibrationCalls, kCalibrationTrials, kCalibrationMinTrials);
  for (int k = 0; k < kProbeKinds; ++k) {
    c.sampling[k] = sampled.pair[k] > c.pair[k] ? sampled.pair[k] - c.pair[k] : 0;
    c.reference[k] = cal->sampled_median(static_cast<ProbeKind>(k));
  }
  t_stack = saved_stack;
  detail::t_hot = saved;
  return detail::g_mode.load() == detail::kEnabled ? c : current;
}

std::atomic<bool> g_costs_measured{false};  // g_costs came from this process's calibration
std::atomic<bool> g_costs_adopted{false};   // or from an earlier process's (adopt_costs)

// measure() that notes whether it measured.
PERFHAT_NOINSTR void calibrate_now() {
  const bool on = detail::g_mode.load() == detail::kEnabled;
  g_costs = measure(g_costs);
  if (on && detail::g_mode.load() == detail::kEnabled) g_costs_measured.store(true);
}

}  // namespace

ProbeCosts g_costs;
void (*g_hook_enter)(void* fn) = nullptr;
void (*g_hook_exit)(void* fn) = nullptr;
[[gnu::noinline]] PERFHAT_NOINSTR void no_hook(void* fn) { asm volatile("" : : "r"(fn)); }
void (*volatile g_hook_none)(void* fn) = &no_hook;

PERFHAT_CONSTINIT thread_local ThreadStack* t_stack __attribute__((tls_model("initial-exec"))) =
    nullptr;

PERFHAT_NOINSTR void note_sample(ThreadStack& s, ProbeKind kind, uint64_t ticks) noexcept {
  s.spent += s.costs->sampling[kind];
  const uint64_t ref = s.costs->reference[kind];
  s.samples[kind][s.sampled_n[kind]++ % kSampleBatch] =
      static_cast<uint16_t>(std::min<uint64_t>(ticks, UINT16_MAX));
  if (s.sampled_n[kind] < kSampleBatch || !s.adapt) return;
  const uint64_t median = sample_median(s, kind);
  s.sampled_n[kind] = 0;
  const bool same_units = detail::g_tick_source.load(std::memory_order_relaxed) == nullptr;
  // Signed: clamping each step at zero would turn the noise of a cost equal to the reference
  // into a positive bias. A pair costs between nothing and five calibrated pairs.
  const auto pair = static_cast<int64_t>(s.costs->pair[kind]);
  int64_t excess =
      same_units && ref != 0
          ? (static_cast<int64_t>(median) - static_cast<int64_t>(ref)) * (int64_t{1} << kCostShift)
          : 0;
  excess = std::clamp(excess, -pair, 4 * pair);
  s.extra[kind] = (3 * s.extra[kind] + excess) / 4;  // a running estimate, moving by a quarter
}

PERFHAT_NOINSTR void enter_sampled(ThreadStack& s, void* fn) noexcept {
  const uint64_t t0 = sample_clock();
  s.in_hook = true;
  Site* site = cached_site(s, fn);
  if (excluded(site) || s.top == s.frames + ThreadStack::kMaxDepth) {
    if (!excluded(site)) ++s.deep;
    s.spent += pair_cost(s, kSkipped);
    s.in_hook = false;
    note_sample(s, kSkipped, sample_clock() - t0);
    return;
  }
  Frame* f = push_frame(s, fn, *site);
  s.in_hook = false;
  const uint64_t t = sample_clock() - t0;
  f->sampled_entry = t == 0 ? 1 : t > UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(t);
}

PERFHAT_NOINSTR void enter_skipped(ThreadStack& s, const Site* site) noexcept {
  if (!excluded(site)) ++s.deep;
  s.spent += pair_cost(s, kSkipped);
  s.in_hook = false;
}

PERFHAT_NOINSTR void leave_deep(ThreadStack& s, void* fn) noexcept {
  s.in_hook = true;
  if (!excluded(cached_site(s, fn))) --s.deep;
  s.in_hook = false;
}

PERFHAT_NOINSTR void leave_sampled(ThreadStack& s, Frame* f) noexcept {
  const uint32_t sampled_entry = f->sampled_entry;
  const uint64_t t0 = sample_clock();
  s.in_hook = true;
  const ProbeCosts& c = *s.costs;
  const uint64_t spent = s.spent;
  if (f->kind >= kClocked && detail::g_compensate.load(std::memory_order_relaxed)) {
    f->probe()->discount((spent - f->spent0 + c.self[f->kind]) >> kCostShift);
  }
  end_probe(s, f, f->kind);
  s.spent = spent + pair_cost(s, f->kind);
  s.top = f;
  s.in_hook = false;
  note_sample(s, f->kind, sample_clock() - t0 + sampled_entry);
}

PERFHAT_NOINSTR void counted_exit_work(ThreadStack& s, Frame* f) noexcept {
  detail::Hot* h = detail::t_hot;
  Site* site = cached_site(s, f->fn);
  const uint32_t id = site->id.load(std::memory_order_relaxed);
  // Counted while registered in this thread's slots; a site excluded since has no slot.
  if (id - 1u >= h->capacity - 1u) return;
  detail::HookProbe::end_counted(&h->slots[id], h, site);
}

PERFHAT_NOINSTR void leave_unmatched(ThreadStack& s, void* fn) noexcept {
  Frame* match = nullptr;
  for (Frame* f = s.top - 1; f != s.frames;) {
    if ((--f)->fn == fn) {
      match = f;
      break;
    }
  }
  if (match == nullptr) return;
  while (s.top - 1 != match) leave(s, s.top[-1].fn);
  leave(s, fn);
}

// The calling thread's stack, found once per thread and only when a frame is to be ended (for
// the main thread glibc reads /proc/self/maps).
PERFHAT_NOINSTR void find_thread_stack(ThreadStack& s) noexcept {
  s.stack_lo = 0;
  s.stack_hi = UINTPTR_MAX;
#if defined(__GLIBC__)
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return;
  void* lo = nullptr;
  size_t size = 0;
  if (pthread_attr_getstack(&attr, &lo, &size) == 0 && lo != nullptr && size != 0) {
    s.stack_lo = reinterpret_cast<uintptr_t>(lo);
    s.stack_hi = s.stack_lo + size;
  }
  pthread_attr_destroy(&attr);
#endif
}

PERFHAT_NOINSTR void leave_returned(ThreadStack& s, uintptr_t sp) noexcept {
  if (s.stack_hi == 0) {
    s.in_hook = true;
    find_thread_stack(s);
    s.in_hook = false;
  }
  if (sp < s.stack_lo || sp >= s.stack_hi) return;
  // Calls past kMaxDepth were deeper than the returned frame: they have returned too.
  s.deep = 0;
  while (returned_on_top(s, sp)) {
    const Frame* top = s.top;
    leave(s, top[-1].fn);
    if (s.top == top) break;  // not popped (cannot happen outside a hook): no endless loop
  }
}

PERFHAT_NOINSTR Site* fill_cache(ThreadStack& s, void* fn) noexcept {
  auto& c = s.cache[ThreadStack::cache_index(fn)];
  c.site = site_for(fn);
  c.fn = fn;
  return c.site;
}

PERFHAT_NOINSTR std::vector<Site*> sites_for(const std::vector<void*>& fns,
                                             const std::vector<std::string>& mangled) {
  detail::Lock l(g_mu);
  std::vector<const void*> missing;
  for (size_t i = 0; i < fns.size(); ++i) {
    void* fn = fns[i];
    if (sites().find(fn) != sites().end()) continue;
    if (i < mangled.size() && !mangled[i].empty()) {
      add_site(fn, {mangled[i], symbolize::demangle(mangled[i]), fn});
    } else {
      missing.push_back(fn);
    }
  }
  std::sort(missing.begin(), missing.end());
  missing.erase(std::unique(missing.begin(), missing.end()), missing.end());
  const std::vector<symbolize::Symbol> syms = symbolize::resolve_all(missing);
  for (size_t i = 0; i < missing.size(); ++i) add_site(const_cast<void*>(missing[i]), syms[i]);
  std::vector<Site*> out;
  out.reserve(fns.size());
  for (void* fn : fns) out.push_back(sites().find(fn)->second);
  return out;
}

PERFHAT_NOINSTR std::string mangled_of(void* fn) {
  detail::Lock l(g_mu);
  auto it = sites().find(fn);
  return it != sites().end() && it->second->mangled != nullptr ? it->second->mangled : "";
}

PERFHAT_NOINSTR Site* site_for(void* fn) noexcept {
  Site* s = table_find(fn);
  return s != nullptr ? s : register_site(fn);
}

PERFHAT_NOINSTR ThreadStack* thread_stack_slow() noexcept {
  if (t_stack == nullptr && !t_stack_dead) {
    // Default-initialized: the frames (20 KB, 5 pages) are written when pushed and never read
    // above the top, so a thread touches only the pages its depth reaches.
    t_stack = new (std::nothrow) ThreadStack;
    if (t_stack == nullptr) return nullptr;
    if (!in_context_sampling()) {
      t_stack->adapt = false;
      t_stack->sample_countdown = UINT32_MAX;
    }
    (void)&t_stack_guard;  // odr-use: registers the destructor for this thread
    t_stack->in_hook = true;
    std::call_once(g_calibrated, [] { calibrate_now(); });
    t_stack->in_hook = false;
  }
  return t_stack;
}

PERFHAT_NOINSTR ProbeCosts recalibrate() {
  ThreadStack* s = thread_stack();
  if (s != nullptr) s->in_hook = true;
  std::call_once(g_calibrated, [] {});
  calibrate_now();
  if (s != nullptr) s->in_hook = false;
  return g_costs;
}

PERFHAT_NOINSTR bool measured_costs(ProbeCosts& out) {
  if (!g_costs_measured.load() && !g_costs_adopted.load()) return false;
  out = g_costs;
  return true;
}

PERFHAT_NOINSTR bool adopt_costs(const ProbeCosts& c) {
  std::call_once(g_calibrated, [&] {
    g_costs = c;
    g_costs_adopted.store(true);
  });
  return g_costs_adopted.load();
}

PERFHAT_NOINSTR bool costs_measured_here() { return g_costs_measured.load(); }

PERFHAT_NOINSTR size_t functions_seen() {
  detail::Lock l(g_mu);
  return sites().size();
}

}  // namespace perfhat::autoinstrument
