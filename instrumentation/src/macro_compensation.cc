#include "macro_compensation.h"

#include <algorithm>
#include <vector>

#include "budget_calibration.h"
#include "site_activity.h"

namespace perfhat::detail {

std::atomic<uint64_t> g_macro_pair[autoinstrument::kProbeKinds] = {};
std::atomic<bool> g_macro_probe_ran{false};

bool calibrate_macro_compensation() {
  if (!g_compensate.load(std::memory_order_relaxed)) return true;  // never needed
  if (!g_macro_probe_ran.load(std::memory_order_relaxed)) return false;
  std::vector<SiteActivity> sites;
  uint64_t recorded = 0;
  Engine::get().budget_snapshot(sites, recorded, ~uint32_t{0});
  uint32_t free_site = 1;
  for (const SiteActivity& a : sites) free_site = std::max(free_site, a.id + 1);
  const autoinstrument::ProbeCosts c = budget::calibrateMacroProbe(free_site);
  for (int k = 0; k < autoinstrument::kProbeKinds; ++k)
    g_macro_pair[k].store(c.pair[k], std::memory_order_relaxed);
  return true;
}

}  // namespace perfhat::detail
