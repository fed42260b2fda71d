// The site and thread registry: a probe's first call registers its site and, on a new
// thread, the thread's slots and rings (prepare); dead threads are folded into totals and freed
// (reap_threads); per-site totals across threads (totals).
#include "engine_internal.h"

#include <cxxabi.h>
#include <sys/mman.h>

#include <algorithm>
#include <bit>
#include <exception>

#include "probe_self_timing.h"
#include "site_symbol.h"
#include "symbolize.h"

namespace perfhat::detail {

constinit thread_local bool t_exiting = false;

namespace {

// Itanium C++ ABI 2.2.2: the per-thread exception globals behind std::uncaught_exceptions().
struct EhGlobals {
  void* caught_exceptions;
  unsigned int uncaught_exceptions;
};

// Checks once that the field above is the counter std::uncaught_exceptions() reads: values
// written to it (the calling thread's own, restored at once) must come back from it. No exception
// is thrown to check: a process's first throw starts the unwinder (0.2-0.7 ms in a 10 MB program,
// bench/README.md), more than the rest of a carried auto-instrumented process's start-up.
// Otherwise the probes fall back to calling std::uncaught_exceptions().
bool eh_layout_ok() {
  static const bool ok = [] {
    auto* g = reinterpret_cast<EhGlobals*>(abi::__cxa_get_globals());
    if (g == nullptr) return false;
    const unsigned saved = g->uncaught_exceptions;
    bool agree = std::uncaught_exceptions() == static_cast<int>(saved);
    for (unsigned probe : {saved + 3, saved + 1000}) {  // two values: no coincidence
      g->uncaught_exceptions = probe;
      agree = agree && std::uncaught_exceptions() == static_cast<int>(probe);
    }
    g->uncaught_exceptions = saved;
    return agree;
  }();
  return ok;
}

// The symbol of the function containing `addr`. The probe's registration call sits in a cold
// block that GCC may move to a "<name>.cold" fragment; clone suffixes (.cold, .part.N, .isra.N,
// .constprop.N) never occur in an Itanium mangled name, so the name up to the first '.' is the
// user's function.
std::string function_symbol(const void* addr) {
  std::string m = symbolize::resolve(addr).mangled;
  if (m.rfind("_Z", 0) == 0) m = m.substr(0, m.find('.'));
  return m;
}

// Destroys the thread's state registration at thread exit.
struct ThreadGuard {
  ThreadState* ts = nullptr;
  ~ThreadGuard() {
    t_exiting = true;
    t_hot = nullptr;
    if (ts) Engine::get().thread_exit(ts);
  }
};
thread_local ThreadGuard t_guard;

}  // namespace

void resolve(SiteInfo& si) {
  if (si.resolved) return;
  if (si.addr) si.mangled = function_symbol(si.addr);
  // A probed function inlined into its caller: the address is the caller's (site_symbol.h).
  if (!si.mangled.empty() && !si.function.empty() &&
      symbol_is_another_function(si.function, symbolize::demangle(si.mangled)))
    si.mangled.clear();
  si.resolved = true;
}

void SiteTotals::add(const Slot& s) {
  uint64_t c = s.count.load(std::memory_order_relaxed);
  if (c == 0) return;
  count += c;
  uint64_t t = s.timed.load(std::memory_order_relaxed);
  timed += t;
  if (t > 0) window_calls += s.last_index.load(std::memory_order_relaxed) + 1;
  sum_ticks += s.sum_ticks.load(std::memory_order_relaxed);
  errors += s.errors.load(std::memory_order_relaxed);
  first = std::min(first, s.first_tick.load(std::memory_order_relaxed));
  last = std::max(last, s.last_tick.load(std::memory_order_relaxed));
  size_n += s.size_n.load(std::memory_order_relaxed);
  size_sum += s.size_sum.load(std::memory_order_relaxed);
  size_sq += s.size_sq.load(std::memory_order_relaxed);
  sessions |= s.sessions.load(std::memory_order_relaxed);
  overflow_n += s.overflow_n.load(std::memory_order_relaxed);
  overflow_ticks += s.overflow_ticks.load(std::memory_order_relaxed);
  overflow_errors += s.overflow_errors.load(std::memory_order_relaxed);
}

void SiteTotals::add(const SiteTotals& o) {
  if (o.count == 0) return;
  count += o.count;
  timed += o.timed;
  window_calls += o.window_calls;
  sum_ticks += o.sum_ticks;
  errors += o.errors;
  first = std::min(first, o.first);
  last = std::max(last, o.last);
  size_n += o.size_n;
  size_sum += o.size_sum;
  size_sq += o.size_sq;
  sessions |= o.sessions;
  overflow_n += o.overflow_n;
  overflow_ticks += o.overflow_ticks;
  overflow_errors += o.overflow_errors;
}

uint32_t Engine::register_site(Site& site, const void* ret_addr) {
  uint32_t id = site.id.load(std::memory_order_relaxed);
  if (id == 0) {
    if (sites_.size() >= kMaxSites) {
      set_site_id(site, kExcludedSite);
      return kExcludedSite;
    }
    SiteInfo info;
    info.site = &site;
    info.function = site.function ? site.function : "";
    info.name = site.name ? site.name : info.function;
    info.file = site.file ? site.file : "";
    info.line = site.line;
    info.kind = site.kind;
    info.addr = site.address ? site.address : ret_addr;
    if (site.mangled) {
      info.mangled = site.mangled;
      info.resolved = true;
    }
    bool admit =
        (scope_.admits(info.function) || scope_.admits(info.name)) && in_variant(mask_.get(), info);
    id = static_cast<uint32_t>(sites_.size());
    sites_.push_back(std::move(info));
    if (!admit) id = kExcludedSite;
    set_site_id(site, id);
  }
  return id;
}

Hot* Engine::prepare(Site& site, const void* ret_addr) {
  if (t_exiting) return nullptr;
  Hot* h = t_hot;
  Lock l(mu_);
  if (register_site(site, ret_addr) == kExcludedSite) return nullptr;
  if (h == nullptr) {
    auto* ts = new ThreadState();
    ts->tid = next_tid_.fetch_add(1);
    ts->slots_bytes = sizeof(Slot) * kMaxSites;
    void* mem = ::mmap(nullptr, ts->slots_bytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (mem == MAP_FAILED) {
      delete ts;
      return nullptr;
    }
    // Zero-filled anonymous pages are valid all-zero Slots (atomics of integers/doubles).
    ts->hot.slots = static_cast<Slot*>(mem);
    ts->hot.capacity = kMaxSites;
    ts->hot.owner = ts;
    ts->hot.rng = random64() | 1;
    draw_self_timing_gap(ts);
    ts->hot.eh_uncaught =
        eh_layout_ok()
            ? &reinterpret_cast<EhGlobals*>(abi::__cxa_get_globals())->uncaught_exceptions
            : &kAlwaysCheck;
    // Aggregate mode's ring: 2 MB of address space, pages committed only once written.
    void* calls = ::mmap(nullptr, sizeof(CallRecord) * kCallRing, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (calls != MAP_FAILED) {
      ts->calls = static_cast<CallRecord*>(calls);
      ts->calls_mask = kCallRing - 1;
    }
    uint32_t ring = std::bit_ceil(std::max<uint32_t>(cfg_.span_ring_per_thread, 16));
    ts->ring = SpanRing(ring);
    ts->ring_mask = ring - 1;
    threads_.push_back(ts);
    t_guard.ts = ts;
    t_hot = h = &ts->hot;
  }
  return h;
}

void Engine::thread_exit(ThreadState* ts) { ts->alive.store(false, std::memory_order_release); }

void Engine::reap_threads() {
  // Dead threads with drained rings are folded into retired_ and freed.
  for (auto it = threads_.begin(); it != threads_.end();) {
    ThreadState* ts = *it;
    if (ts->alive.load(std::memory_order_acquire) ||
        ts->head.load(std::memory_order_acquire) != ts->tail.load(std::memory_order_relaxed) ||
        ts->calls_head.load(std::memory_order_acquire) !=
            ts->calls_tail.load(std::memory_order_relaxed)) {
      ++it;
      continue;
    }
    if (retired_.size() < sites_.size()) retired_.resize(sites_.size());
    for (size_t id = 1; id < sites_.size(); ++id) retired_[id].add(ts->hot.slots[id]);
    dropped_ring_retired_ += ts->dropped.load();
    recorded_retired_ += ts->recorded.load();
    recorded_roots_retired_ += ts->recorded_roots.load();
    to_aggregates_ += ts->to_aggregates.load();
    hist_dropped_retired_ += ts->calls_dropped.load();
    if (ts->calls != nullptr) ::munmap(ts->calls, sizeof(CallRecord) * kCallRing);
    ::munmap(ts->hot.slots, ts->slots_bytes);
    delete ts;
    it = threads_.erase(it);
  }
}

std::vector<SiteTotals> Engine::totals() {
  std::vector<SiteTotals> t(sites_.size());
  for (size_t id = 1; id < sites_.size(); ++id) {
    if (id < retired_.size()) t[id].add(retired_[id]);
    for (ThreadState* ts : threads_) t[id].add(ts->hot.slots[id]);
  }
  return t;
}

}  // namespace perfhat::detail
