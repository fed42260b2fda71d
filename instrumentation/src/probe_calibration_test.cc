#include "probe_calibration.h"

#include <gtest/gtest.h>

namespace perfhat::autoinstrument {
namespace {

uint64_t g_now = 0;
uint64_t fake_clock() { return g_now += 1; }  // each read costs one tick

// A call of each kind costs a known number of ticks; one loop of every kind is preempted.
class FakeTarget : public CalibrationTarget {
 public:
  void run_pair(ProbeKind kind) override {
    g_now += kCost[kind];
    if (++calls_ == 50) g_now += 100000;  // a preempted loop: the cheapest loop counts
    if (calls_ == 200 * 3) calls_ = 0;
  }
  void reset_self() override { ++resets_; }
  uint64_t self_ticks(ProbeKind kind) override {
    // The first trial of each kind was slowed down, the rest measured 5 (fixed-point).
    return kind >= kClocked ? (resets_ % 9 == 1 ? 999u : 5u) << kCostShift : 0;
  }
  static constexpr uint64_t kCost[kProbeKinds] = {3, 10, 40, 90};

 private:
  int calls_ = 0, resets_ = 0;
};

TEST(InstrCalibration, MeasuresEachKindsCostWithoutTheClockOrPreemption) {
  FakeTarget t;
  ProbeCosts c = calibrate(t, &fake_clock, 200, 9);
  for (int k = 0; k < kProbeKinds; ++k) {
    EXPECT_EQ(c.pair[k], FakeTarget::kCost[k] << kCostShift) << "kind " << k;
  }
  EXPECT_EQ(c.self[kSkipped], 0u);
  EXPECT_EQ(c.self[kCounted], 0u);
  EXPECT_EQ(c.self[kClocked], 5u << kCostShift);
  EXPECT_EQ(c.self[kRecorded], 5u << kCostShift);
}

// Fractions of a tick survive: 1,001 ticks over 200 calls is 5.005 ticks a call, not 5.
TEST(InstrCalibration, KeepsFractionsOfATick) {
  class Target : public CalibrationTarget {
   public:
    void run_pair(ProbeKind) override { g_now += (++n_ % 200 == 0) ? 6 : 5; }

   private:
    int n_ = 0;
  } t;
  ProbeCosts c = calibrate(t, &fake_clock, 200, 3);
  EXPECT_GT(c.pair[kCounted], 5u << kCostShift);
  EXPECT_LE(c.pair[kCounted], 6u << kCostShift);
}

}  // namespace
}  // namespace perfhat::autoinstrument
