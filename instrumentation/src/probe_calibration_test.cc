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
  static constexpr uint64_t kCost[kProbeKinds] = {3, 10, 15, 40, 90};

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
  EXPECT_EQ(c.self[kCountedFull], 0u);
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

// With a minimum below the trials, a kind whose loops agree stops at the minimum; one whose
// loops never come within 1/32 of each other runs every trial, and the cheapest still counts.
class CountingTarget : public CalibrationTarget {
 public:
  explicit CountingTarget(bool varying) : varying_(varying) {}
  void run_pair(ProbeKind kind) override {
    ++pairs[kind];
    // Varying: each loop of 100 calls costs 10 % more than the one before, from 1,000 ticks.
    g_now += varying_ ? 10 + (pairs[kind] - 2) / 100 : 10;
  }
  void run_harness() override { ++harness; }
  int pairs[kProbeKinds] = {};
  int harness = 0;

 private:
  bool varying_;
};

TEST(InstrCalibration, StopsAKindOnceTwoLoopsAgree) {
  CountingTarget t(false);
  ProbeCosts c = calibrate(t, &fake_clock, 100, 7, 3);
  for (int k = 0; k < kProbeKinds; ++k) {
    EXPECT_EQ(t.pairs[k], 1 + 3 * 100) << "kind " << k;  // the warm-up call and 3 loops
    EXPECT_EQ(c.pair[k], 10u << kCostShift) << "kind " << k;
  }
  EXPECT_EQ(t.harness, 1 + 3 * 100);
}

TEST(InstrCalibration, RunsEveryTrialWhenNoLoopsAgree) {
  CountingTarget t(true);
  ProbeCosts c = calibrate(t, &fake_clock, 100, 7, 3);
  for (int k = 0; k < kProbeKinds; ++k) {
    EXPECT_EQ(t.pairs[k], 1 + 7 * 100) << "kind " << k;
    // The first (cheapest) loop: 100 calls of 10 ticks (its clock read is the harness floor).
    EXPECT_EQ(c.pair[k], 10u << kCostShift) << "kind " << k;
  }
}

}  // namespace
}  // namespace perfhat::autoinstrument
