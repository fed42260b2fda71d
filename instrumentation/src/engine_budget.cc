// The engine's side of the collection budget: a snapshot of every site's totals for the planner,
// counting the calls of skip runs in progress (budget_runtime.h).
#include <algorithm>
#include <vector>

#include "budget_runtime.h"
#include "engine.h"

namespace perfhat::detail {

double Engine::budget_snapshot(std::vector<SiteActivity>& out, uint64_t& recorded,
                               uint32_t named_below) {
  Lock l(mu_);
  out.clear();
  auto t = totals();
  recorded = recorded_retired_.load();
  for (ThreadState* ts : threads_) recorded += ts->recorded.load(std::memory_order_relaxed);
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
    a.timed = t[id].timed;
    a.sum_ticks = t[id].sum_ticks;
    out.push_back(std::move(a));
  }
  return ns_per_tick_.load();
}

void Engine::cut_budget_runs(const std::vector<bool>& sites) {
  Lock l(mu_);
  for (ThreadState* ts : threads_) {
    const std::size_t n = std::min<std::size_t>(sites.size(), ts->hot.capacity);
    for (std::size_t id = 1; id < n; ++id)
      if (sites[id]) budget::cut_run(ts->hot.slots[id]);
  }
}

}  // namespace perfhat::detail
