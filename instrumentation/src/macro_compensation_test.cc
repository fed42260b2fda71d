// Overhead compensation for the probe macros (macro_compensation.h): a clocked call is credited
// exactly the calibrated costs of the probes that finished inside it, at any depth, and nothing
// for hook sites (the hook stack compensates those) or with compensation off.
#include "macro_compensation.h"

#include <gtest/gtest.h>

namespace {

using perfhat::autoinstrument::kClocked;
using perfhat::autoinstrument::kCostShift;
using perfhat::autoinstrument::kRecorded;
using namespace perfhat::detail;

class MacroCompensation : public ::testing::Test {
 protected:
  void SetUp() override {
    ts_.hot.owner = &ts_;
    saved_[0] = g_macro_pair[kClocked].load();
    saved_[1] = g_macro_pair[kRecorded].load();
    g_macro_pair[kClocked].store(uint64_t{5} << kCostShift);
    // 40.5 ticks: the fractions add up across calls.
    g_macro_pair[kRecorded].store((uint64_t{81} << kCostShift) / 2);
  }
  void TearDown() override {
    g_macro_pair[kClocked].store(saved_[0]);
    g_macro_pair[kRecorded].store(saved_[1]);
    g_compensate.store(true);
  }
  ThreadState ts_;
  Site macro_{"m", "f", "file", 1, kFunction};
  uint64_t saved_[2] = {};
};

TEST_F(MacroCompensation, ACallIsCreditedItsNestedProbesAtAnyDepth) {
  Hot* h = &ts_.hot;
  const uint64_t outer = nested_probe_base(h, macro_);
  const uint64_t middle = nested_probe_base(h, macro_);
  for (int i = 0; i < 4; ++i) add_probe_cost(h, macro_, kRecorded);  // 4 × 40.5
  // The middle call sees its 4 children.
  EXPECT_EQ(nested_probe_ticks(h, macro_, middle), 162u);
  add_probe_cost(h, macro_, kRecorded);  // the middle call itself
  add_probe_cost(h, macro_, kClocked);   // a timed sibling
  // The outer call sees all six, plus what discount() added to its own counter.
  EXPECT_EQ(nested_probe_ticks(h, macro_, outer + 7), 162u + 40u + 5u + 7u);
}

TEST_F(MacroCompensation, HookSitesAndCompensationOffAreLeftAlone) {
  Hot* h = &ts_.hot;
  Site hook{"h", "g", "file", 2, kFunction};
  hook.address = reinterpret_cast<const void*>(&ts_);
  const uint64_t base = nested_probe_base(h, hook);
  add_probe_cost(h, hook, kRecorded);
  add_probe_cost(h, macro_, kRecorded);
  EXPECT_EQ(nested_probe_ticks(h, hook, base + 3), 3u);  // only its own discount()
  g_compensate.store(false);
  const uint64_t off = nested_probe_base(h, macro_);
  add_probe_cost(h, macro_, kRecorded);
  EXPECT_EQ(nested_probe_ticks(h, macro_, off), 0u);
}

// The costs are measured only once a probe macro's site has done exit work: before that the
// calibration does nothing and is asked again; a hook site's probes do not count.
TEST_F(MacroCompensation, NothingIsCalibratedBeforeAMacroProbeRan) {
  const bool ran = g_macro_probe_ran.load();
  g_macro_probe_ran.store(false);
  Hot* h = &ts_.hot;
  Site hook{"h", "g", "file", 2, kFunction};
  hook.address = reinterpret_cast<const void*>(&ts_);
  add_probe_cost(h, hook, kRecorded);
  EXPECT_FALSE(g_macro_probe_ran.load());
  EXPECT_FALSE(calibrate_macro_compensation());
  EXPECT_EQ(g_macro_pair[kClocked].load(), uint64_t{5} << kCostShift);  // untouched
  add_probe_cost(h, macro_, kRecorded);
  EXPECT_TRUE(g_macro_probe_ran.load());
  g_compensate.store(false);
  EXPECT_TRUE(calibrate_macro_compensation());  // off: never needed, not asked again
  g_macro_probe_ran.store(ran);
}

}  // namespace
