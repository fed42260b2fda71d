// The probe's one entry test (Site::armed, issue 23): a probe site is armed when probes are not
// off and the site is not excluded (PERFHAT_SCOPE, this replica's variant, the site limit). The
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
  site.armed.store(armed_value(g_mode.load(), id), std::memory_order_relaxed);
}

void Engine::rearm_sites() {
  const int mode = g_mode.load();
  for (size_t id = 1; id < sites_.size(); ++id) {
    Site& s = *sites_[id].site;
    s.armed.store(armed_value(mode, s.id.load(std::memory_order_relaxed)),
                  std::memory_order_relaxed);
  }
}

// g_mode first, then the walk under the lock: a site registered meanwhile reads the new mode
// (register_site holds the lock), and of two concurrent calls the later walk sees the final mode.
void Engine::set_mode(int mode) {
  if (mode == kEnabled) activate();  // started with probes off: what running probes need
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
