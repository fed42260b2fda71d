// The engine's side of the collection budget: a snapshot of every site's totals for the planner,
// counting the calls of skip runs in progress (budget_runtime.h).
#include <algorithm>
#include <vector>

#include "budget_runtime.h"
#include "engine.h"

namespace perfhat::detail {

double Engine::budget_snapshot(std::vector<SiteActivity>& out, uint64_t& recorded,
                               uint32_t named_below, uint64_t* recorded_roots) {
  Lock l(mu_);
  out.clear();
  auto t = totals();
  // The roots first: a root counts in `recorded` before it counts as a root (Probe::finish), so
  // read in this order the roots never run ahead of the calls they are part of.
  if (recorded_roots != nullptr) {
    *recorded_roots = recorded_roots_retired_.load();
    for (ThreadState* ts : threads_)
      *recorded_roots += ts->recorded_roots.load(std::memory_order_acquire);
  }
  recorded = recorded_retired_.load();
  for (ThreadState* ts : threads_) recorded += ts->recorded.load(std::memory_order_relaxed);
  // The calls a site made on a thread, a skip run in progress included.
  auto calls_on = [](const ThreadState* ts, uint32_t id) -> uint64_t {
    if (id >= ts->hot.capacity) return 0;
    const Slot& slot = ts->hot.slots[id];
    return slot.count.load(std::memory_order_relaxed) +
           budget::passed_over(slot.budget_run.load(std::memory_order_relaxed),
                               slot.budget_skip.load(std::memory_order_relaxed));
  };
  // Threads that have run a request root (any call of a kRequest site).
  std::vector<const ThreadState*> serving;
  for (const ThreadState* ts : threads_) {
    bool serves = false;
    for (uint32_t id = 1; id < sites_.size() && !serves; ++id)
      serves = sites_[id].kind == kRequest && calls_on(ts, id) > 0;
    if (serves) serving.push_back(ts);
  }
  for (uint32_t id = 1; id < sites_.size(); ++id) {
    SiteInfo& si = sites_[id];
    if (si.site->id.load(std::memory_order_relaxed) == kExcludedSite) continue;
    SiteActivity a;
    a.id = id;
    a.kind = si.kind;
    if (id >= named_below) {  // the caller keeps what it was told about the others
      a.name = si.name;
      a.function = si.function;
      a.mangled = si.mangled;
      a.addr = si.addr;
    }
    // Calls passed over in runs still in progress (their slot counts them when the run ends).
    a.count = t[id].count;
    for (ThreadState* ts : threads_) {
      const Slot& slot = ts->hot.slots[id];
      const uint32_t run = slot.budget_run.load(std::memory_order_relaxed);
      const uint32_t skip = slot.budget_skip.load(std::memory_order_relaxed);
      a.count += budget::passed_over(run, skip);
    }
    for (const ThreadState* ts : serving) a.on_request_threads += calls_on(ts, id);
    a.timed = t[id].timed;
    a.sum_ticks = t[id].sum_ticks;
    out.push_back(std::move(a));
  }
  return ns_per_tick();
}

}  // namespace perfhat::detail
