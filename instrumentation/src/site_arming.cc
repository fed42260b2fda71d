// The probe's one entry test (Site::armed, issue 23): a probe site is armed when probes are not
// off, the site is not excluded (PERFHAT_SCOPE, this replica's variant, the site limit) and the
// collection budget has not disarmed it (probing mode's untraced classes, issue 22). The
// global switch and the site's admission change rarely and under the engine's lock; every change
// walks the registered sites, so the inline probe reads one byte of its own site and never
// g_mode, and a masked probe runs exactly what a disabled one runs.
#include "engine_internal.h"

namespace perfhat::detail {
namespace {

uint8_t armed_value(int mode, uint32_t id) {
  // kUninitialized stays armed: the first call initializes (Probe::enter).
  return mode != kDisabled && id != kExcludedSite ? 1 : 0;
}

}  // namespace

void Engine::set_site_id(Site& site, uint32_t id) {
  site.id.store(id, std::memory_order_relaxed);
  const bool budget_off = id < budget_off_.size() && budget_off_[id];
  site.armed.store(budget_off ? 0 : armed_value(g_mode.load(), id), std::memory_order_relaxed);
}

void Engine::rearm_sites() {
  for (size_t id = 1; id < sites_.size(); ++id) {
    Site& s = *sites_[id].site;
    set_site_id(s, s.id.load(std::memory_order_relaxed));
  }
}

// Only the sites whose budget state changes are written: a probe reads its armed byte on every
// call, a store to an unchanged byte would still take the line from the probing threads' caches.
void Engine::set_budget_disarmed(const std::vector<bool>& off) {
  Lock l(mu_);
  for (size_t id = 1; id < sites_.size(); ++id) {
    const bool was = id < budget_off_.size() && budget_off_[id];
    const bool now = id < off.size() && off[id];
    if (was == now) continue;
    if (budget_off_.size() <= id) budget_off_.resize(sites_.size(), false);
    budget_off_[id] = now;
    Site& s = *sites_[id].site;
    set_site_id(s, s.id.load(std::memory_order_relaxed));
  }
}

// g_mode first, then the walk under the lock: a site registered meanwhile reads the new mode
// (register_site holds the lock), and of two concurrent calls the later walk sees the final mode.
void Engine::set_mode(int mode) {
  if (g_forked_child.load()) return;  // a forked child stays off and takes no lock (on_fork_child)
  if (mode == kEnabled) activate();   // started with probes off: what running probes need
  g_mode.store(mode);
  Lock l(mu_);
  rearm_sites();
}

void Engine::park(Site& site, const void* ret_addr) {
  // A forked child never takes the lock (another thread of the parent may have held it) and is
  // never turned on again: the site is only disarmed.
  if (g_forked_child.load()) {
    site.armed.store(0, std::memory_order_relaxed);
    return;
  }
  Lock l(mu_);
  set_site_id(site, register_site(site, ret_addr));
}

}  // namespace perfhat::detail
