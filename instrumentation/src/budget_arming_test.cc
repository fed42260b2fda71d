// Probing mode leaves untraced classes to the stack sampler and disarms their sites
// (Engine::set_budget_disarmed, site_arming.cc): such a site then costs what a disabled probe
// costs and counts nothing, through any other change of the armed byte, until the budget re-arms
// it or the engine shuts down.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "engine.h"
#include "perfhat/memory_exporter.hpp"
#include "perfhat/perfhat.hpp"

namespace {

using perfhat::detail::Site;

Site g_site{nullptr, "int budgetarm::f(int)", __FILE__, __LINE__, perfhat::detail::kFunction};

[[gnu::noinline]] int call(int x) {
  perfhat::detail::Probe p(g_site);
  return x + 1;
}

bool armed() { return g_site.armed.load() != 0; }

uint64_t count() { return perfhat::detail::t_hot->slots[g_site.id.load()].count.load(); }

void disarm() {
  std::vector<bool> off(g_site.id.load() + 1, false);
  off[g_site.id.load()] = true;
  perfhat::detail::Engine::get().set_budget_disarmed(off);
}

TEST(BudgetArming, ADisarmedSiteCountsNothingUntilTheBudgetRearmsIt) {
  perfhat::Config c;
  c.sampler = "full";
  c.cycle_s = 1e9;
  c.export_interval_s = 1e9;
  ASSERT_TRUE(perfhat::init(c, std::make_shared<perfhat::MemoryExporter>()));
  call(0);  // registered
  ASSERT_TRUE(armed());
  const uint64_t before = count();
  call(1);
  EXPECT_EQ(count(), before + 1);

  disarm();
  EXPECT_FALSE(armed());
  for (int i = 0; i < 5; ++i) call(i);
  EXPECT_EQ(count(), before + 1);
  // Probes switched off and on again: the budget's choice still holds.
  perfhat::set_enabled(false);
  perfhat::set_enabled(true);
  EXPECT_FALSE(armed());
  call(2);
  EXPECT_EQ(count(), before + 1);

  perfhat::detail::Engine::get().set_budget_disarmed({});  // the plan traces it again
  EXPECT_TRUE(armed());
  for (int i = 0; i < 3; ++i) call(i);
  EXPECT_EQ(count(), before + 4);

  // A shutdown forgets the budget's choice: the next engine starts with every site armed.
  disarm();
  perfhat::shutdown();
  ASSERT_TRUE(perfhat::init(c, std::make_shared<perfhat::MemoryExporter>()));
  EXPECT_TRUE(armed());
  perfhat::shutdown();
}

}  // namespace
