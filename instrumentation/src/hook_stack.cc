#include "hook_stack.h"

#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "engine.h"
#include "symbolize.h"

namespace perfhat::detail {

uint64_t begin_span(Hot* h) noexcept;
uint64_t begin_call(Hot* h, uint32_t site) noexcept;

// Forces a clocked probe to record, as Probe::begin does for a sampled call (calibration only:
// a real call's kind is the sampler's and the filter's decision).
struct ProbeCalibration {
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

// ---- Address -> Site ------------------------------------------------------------------------
// A fixed open-addressing table read without a lock (entries are written once, site before fn,
// under g_mu); the map behind it holds every Site and takes over when the table is 3/4 full.
constexpr size_t kTableSize = size_t{1} << 15;
struct TableEntry {
  std::atomic<void*> fn{nullptr};
  std::atomic<Site*> site{nullptr};
};
TableEntry g_table[kTableSize];
size_t g_table_used = 0;  // guarded by g_mu
std::mutex g_mu;
std::unordered_map<void*, Site*>& sites() {
  static auto* m = new std::unordered_map<void*, Site*>();  // never destroyed: hooks run at exit
  return *m;
}

PERFHAT_NOINSTR size_t slot_of(void* fn) {
  auto x = reinterpret_cast<uintptr_t>(fn);
  x ^= x >> 17;
  x *= 0x9E3779B97F4A7C15ull;
  return static_cast<size_t>(x >> 40) & (kTableSize - 1);
}

PERFHAT_NOINSTR Site* table_find(void* fn) {
  for (size_t i = slot_of(fn), n = 0; n < kTableSize; i = (i + 1) & (kTableSize - 1), ++n) {
    void* f = g_table[i].fn.load(std::memory_order_acquire);
    if (f == fn) return g_table[i].site.load(std::memory_order_relaxed);
    if (f == nullptr) return nullptr;
  }
  return nullptr;
}

PERFHAT_NOINSTR Site* register_site(void* fn) {
  std::lock_guard<std::mutex> l(g_mu);
  auto it = sites().find(fn);
  if (it != sites().end()) return it->second;
  symbolize::Symbol sym = symbolize::resolve(fn);
  // Sites live for the whole process (probes reference them).
  const char* name = strdup(sym.demangled.empty() ? "?" : sym.demangled.c_str());
  auto* site = new Site(nullptr, name, "", 0, detail::kFunction);
  site->address = fn;
  site->mangled = sym.mangled.empty() ? nullptr : strdup(sym.mangled.c_str());
  sites().emplace(fn, site);
  if (g_table_used < kTableSize / 4 * 3) {
    size_t i = slot_of(fn);
    while (g_table[i].fn.load(std::memory_order_relaxed) != nullptr) i = (i + 1) & (kTableSize - 1);
    g_table[i].site.store(site, std::memory_order_relaxed);
    g_table[i].fn.store(fn, std::memory_order_release);
    ++g_table_used;
  }
  return site;
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
    ts_.ring.reset(new detail::SpanRecord[16]);
    ts_.ring_mask = 15;
    ts_.calls = calls_;
    ts_.calls_mask = 15;
    site_.id.store(1);
    skipped_.id.store(detail::kExcludedSite);
    stack_->costs = &kNoCosts;
    stack_->cache[ThreadStack::cache_index(fn_)] = {fn_, &site_};
    stack_->cache[ThreadStack::cache_index(skipped_fn_)] = {skipped_fn_, &skipped_};
  }
  PERFHAT_NOINSTR void run_pair(ProbeKind kind) override {
    detail::Slot& slot = slots_[1];
    switch (kind) {
      case kSkipped:
        call_enter(skipped_fn_);
        call_exit(skipped_fn_);
        return;
      case kCounted:
        slot.countdown = 1u << 30;
        break;
      case kClocked:
      case kRecorded:
        slot.countdown = 0;
        break;
      case kProbeKinds:
        return;
    }
    call_enter(fn_);
    // Inactive when probes were turned off meanwhile (the measurement is then discarded).
    detail::Probe& p = *stack_->frames[0].probe();
    if (kind == kRecorded && p.clocked()) detail::ProbeCalibration::record(p);
    call_exit(fn_);
    // Empty the private rings: every recorded call lands in the same entries.
    ts_.head.store(0, std::memory_order_relaxed);
    ts_.tail.store(0, std::memory_order_relaxed);
    ts_.calls_head.store(0, std::memory_order_relaxed);
    ts_.calls_tail.store(0, std::memory_order_relaxed);
    ts_.calls_tail_seen = 0;
  }
  PERFHAT_NOINSTR void reset_self() override {
    slots_[1].timed.store(0);
    slots_[1].sum_ticks.store(0);
  }
  PERFHAT_NOINSTR uint64_t self_ticks(ProbeKind kind) override {
    const uint64_t n = slots_[1].timed.load();
    if (kind < kClocked || n == 0) return 0;
    return (slots_[1].sum_ticks.load() << kCostShift) / n;
  }
  detail::Hot* hot() { return &ts_.hot; }
  ThreadStack* stack() { return stack_.get(); }

 private:
  // Through the compiler hooks when they are linked (the thread's stack is this calibration's
  // while it runs), else straight to the frame work.
  PERFHAT_NOINSTR void call_enter(void* fn) {
    if (g_hook_enter != nullptr) return g_hook_enter(fn);
    enter(*stack_, fn);
  }
  PERFHAT_NOINSTR void call_exit(void* fn) {
    if (g_hook_exit != nullptr) return g_hook_exit(fn);
    leave(*stack_, fn);
  }
  static constexpr unsigned kZero = 0;
  static constexpr ProbeCosts kNoCosts{};
  alignas(64) detail::Slot slots_[2];
  detail::CallRecord calls_[16] = {};
  detail::ThreadState ts_;
  std::unique_ptr<ThreadStack> stack_ = std::make_unique<ThreadStack>();
  void* fn_ = reinterpret_cast<void*>(&calibration_marker);
  // The skipped site's key is never called, only looked up in the pre-seeded cache: one cache
  // line after the marker, so the two can never share a cache slot (two empty functions can sit
  // in the same 16 bytes, and then the calibration timed the skipped path: layout-dependent).
  void* skipped_fn_ = static_cast<char*>(fn_) + (std::size_t{1} << 4);
  Site site_{nullptr, "perfhat.calibration", "", 0, detail::kFunction};
  Site skipped_{nullptr, "perfhat.calibration.skipped", "", 0, detail::kFunction};
};

std::once_flag g_calibrated;

// Probes must be on (the calibration runs the real probe code); otherwise the costs stay.
PERFHAT_NOINSTR ProbeCosts measure(const ProbeCosts& current) {
  if (detail::g_mode.load() != detail::kEnabled) return current;
  auto cal = std::make_unique<HookCalibration>();
  detail::Hot* saved = detail::t_hot;
  ThreadStack* saved_stack = t_stack;
  detail::t_hot = cal->hot();
  t_stack = cal->stack();
  ProbeCosts c = calibrate(*cal, &ticks);
  t_stack = saved_stack;
  detail::t_hot = saved;
  return detail::g_mode.load() == detail::kEnabled ? c : current;
}

}  // namespace

ProbeCosts g_costs;
void (*g_hook_enter)(void* fn) = nullptr;
void (*g_hook_exit)(void* fn) = nullptr;

PERFHAT_CONSTINIT thread_local ThreadStack* t_stack __attribute__((tls_model("initial-exec"))) =
    nullptr;

PERFHAT_NOINSTR Site* fill_cache(ThreadStack& s, void* fn) noexcept {
  auto& c = s.cache[ThreadStack::cache_index(fn)];
  c.site = site_for(fn);
  c.fn = fn;
  return c.site;
}

PERFHAT_NOINSTR Site* site_for(void* fn) noexcept {
  Site* s = table_find(fn);
  return s != nullptr ? s : register_site(fn);
}

PERFHAT_NOINSTR ThreadStack* thread_stack_slow() noexcept {
  if (t_stack == nullptr && !t_stack_dead) {
    t_stack = new (std::nothrow) ThreadStack();
    if (t_stack == nullptr) return nullptr;
    (void)&t_stack_guard;  // odr-use: registers the destructor for this thread
    t_stack->in_hook = true;
    std::call_once(g_calibrated, [] { g_costs = measure(g_costs); });
    t_stack->in_hook = false;
  }
  return t_stack;
}

PERFHAT_NOINSTR ProbeCosts recalibrate() {
  ThreadStack* s = thread_stack();
  if (s != nullptr) s->in_hook = true;
  std::call_once(g_calibrated, [] {});
  g_costs = measure(g_costs);
  if (s != nullptr) s->in_hook = false;
  return g_costs;
}

PERFHAT_NOINSTR size_t functions_seen() {
  std::lock_guard<std::mutex> l(g_mu);
  return sites().size();
}

}  // namespace perfhat::autoinstrument
