// The clock's start-up: activation waits for a provisional baseline only, and the estimate
// settles once its baseline is long enough (tick_baseline.h); the invariant-TSC check asks CPUID
// before reading /proc/cpuinfo.
#include "tick_baseline.h"

#include <gtest/gtest.h>

namespace perfhat::detail {
namespace {

TEST(InstrTickBaseline, ProvisionalAfterTwentyMicrosecondsSettledAfterTwoHundred) {
  const TickBaseline base{1'000'000, 5'000};
  EXPECT_FALSE(base.provisional(5'000 + 19'999));
  EXPECT_TRUE(base.provisional(5'000 + 20'000));
  EXPECT_FALSE(base.settled(5'000 + 20'000));
  EXPECT_FALSE(base.settled(5'000 + 199'999));
  EXPECT_TRUE(base.settled(5'000 + 200'000));
  // 2.6 ticks a nanosecond over the baseline.
  EXPECT_DOUBLE_EQ(base.ns_per_tick(1'000'000 + 520'000, 5'000 + 200'000), 1 / 2.6);
  // No tick elapsed (a reading at the start): the neutral rate, not a division by zero.
  EXPECT_DOUBLE_EQ(base.ns_per_tick(1'000'000, 5'000), 1.0);
}

TEST(InstrTickBaseline, CpuidInvariantTscMeansTheKernelsConstantAndNonstopFlags) {
  if (!cpuid_invariant_tsc()) GTEST_SKIP() << "no invariant-TSC bit in CPUID here";
  EXPECT_TRUE(cpuinfo_invariant_tsc());
}

}  // namespace
}  // namespace perfhat::detail
