// The collection budget's geometric skip (budget_runtime): calls are taken independently with
// the site's probability, the weights 1/p of the taken calls estimate the calls without bias, and
// the calls passed over are still counted exactly. Drives take() the way Probe::decide does: a
// call inside a skip run only decrements it; any other call is counted and asks take().
#include "budget_runtime.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "engine.h"
#include "perfhat/perfhat.hpp"

namespace {

using perfhat::budget::Take;
using perfhat::detail::Hot;
using perfhat::detail::Slot;
using perfhat::detail::ThreadState;

constexpr uint32_t kSite = 1;

struct Calls {
  uint64_t taken = 0;  // recorded
  double weight = 0;   // Σ 1/p of the recorded calls
};

// `n` calls at kSite, as the probe makes them.
Calls call(uint64_t n, Slot& s, Hot& h) {
  Calls out;
  for (uint64_t i = 0; i < n; ++i) {
    if (s.budget_skip.load() != 0) {
      s.budget_skip.store(s.budget_skip.load() - 1);
      continue;
    }
    s.count.store(s.count.load() + 1);
    if (perfhat::budget::take(kSite, &h, s) != Take::kPass) {
      ++out.taken;
      out.weight += perfhat::budget::weight(kSite, &h);
    }
  }
  return out;
}

// Counted so far plus the calls of the run in progress that already happened.
uint64_t counted(const Slot& s) {
  return s.count.load() + perfhat::budget::passed_over(s.budget_run.load(), s.budget_skip.load());
}

class BudgetSkip : public ::testing::Test {
 protected:
  void SetUp() override {
    ts_.hot.rng = 0x243F6A8885A308D3ull;
    ts_.hot.owner = &ts_;
  }
  void TearDown() override { perfhat::budget::clear(); }
  ThreadState ts_;
  Hot& h_ = ts_.hot;
  Slot s_;
};

TEST_F(BudgetSkip, SkipLengthsAreGeometric) {
  EXPECT_EQ(perfhat::budget::skip_length(12345, 1.0), 0u);
  EXPECT_EQ(perfhat::budget::skip_length(12345, 0.0), perfhat::budget::kLongestSkip);
  uint64_t x = 88172645463325252ull;
  double sum = 0, zeros = 0;
  constexpr int kDraws = 200000;
  for (int i = 0; i < kDraws; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    const uint32_t k = perfhat::budget::skip_length(x, 0.1);
    sum += k;
    zeros += k == 0;
  }
  // Mean (1 - p) / p = 9 (standard error 0.02); P(0) = p (standard error 0.0007).
  EXPECT_NEAR(sum / kDraws, 9.0, 0.1);
  EXPECT_NEAR(zeros / kDraws, 0.1, 0.004);
}

TEST_F(BudgetSkip, WeightsEstimateTheCallsAndEveryCallIsCounted) {
  perfhat::budget::publish({1.0, 0.01});
  constexpr uint64_t kCalls = 2000000;
  const Calls c = call(kCalls, s_, h_);
  EXPECT_EQ(counted(s_), kCalls);
  // About 20,000 records: the weighted count's standard error is 0.7 %.
  EXPECT_NEAR(static_cast<double>(c.taken), kCalls * 0.01, kCalls * 0.01 * 0.04);
  EXPECT_NEAR(c.weight / kCalls, 1.0, 0.03);
}

// A re-arm window's records (budget_rearm.h) stand for the calls of the windows their site was
// disarmed in as well: published with a scale, a taken call weighs scale / p. Here 1 window's
// calls recorded at 0.01 with a scale of 10 estimate 10 windows' worth; the table's scale goes
// with the call to the weight whether the call ends a run or is a fresh draw, and other sites keep
// a scale of 1.
TEST_F(BudgetSkip, AScaledSiteWeighsItsScaleOverItsProbability) {
  perfhat::budget::publish({1.0, 0.01, 0.5}, {1.0, 10.0});
  EXPECT_EQ(perfhat::budget::published_scales(), (std::vector<double>{1.0, 10.0, 1.0}));
  constexpr uint64_t kCalls = 2000000;
  const Calls c = call(kCalls, s_, h_);
  EXPECT_EQ(counted(s_), kCalls);
  EXPECT_NEAR(c.weight / (10.0 * kCalls), 1.0, 0.03);
  EXPECT_DOUBLE_EQ(perfhat::budget::weight(2, &h_), 2.0);  // site 2: 1 / 0.5, scale 1
  // A scale that could not weigh a call is the plan's own 1.
  perfhat::budget::publish({1.0, 0.5}, {1.0, -3.0});
  EXPECT_EQ(perfhat::budget::published_scales(), (std::vector<double>{1.0, 1.0}));
  perfhat::budget::publish({1.0, 0.5}, {1.0, std::nan("")});
  EXPECT_DOUBLE_EQ(perfhat::budget::weight(kSite, &h_), 2.0);
}

// The controller publishes a table every window, most of them with the same rates: the runs
// in progress carry on, and the weights still estimate the calls.
TEST_F(BudgetSkip, RepublishingTheSameRatesKeepsTheEstimateUnbiased) {
  constexpr uint64_t kCalls = 2000000;
  Calls c;
  for (uint64_t done = 0; done < kCalls; done += 500) {
    perfhat::budget::publish({1.0, 0.01});
    const Calls part = call(500, s_, h_);
    c.taken += part.taken;
    c.weight += part.weight;
  }
  EXPECT_EQ(counted(s_), kCalls);
  EXPECT_NEAR(c.weight / kCalls, 1.0, 0.03);
}

// A rate raised while runs are in progress: each run's last call stands for the calls the run
// passed over at the old rate (weight 1 / the old rate), not at the new one.
TEST_F(BudgetSkip, ARunEndingAfterARateChangeKeepsItsOwnWeight) {
  double weight = 0;
  uint64_t calls = 0;
  for (int slot = 0; slot < 400; ++slot) {
    Slot s;
    perfhat::budget::publish({1.0, 0.001});
    weight += call(2000, s, h_).weight;
    perfhat::budget::publish({1.0, 1.0});
    const uint64_t rest = s.budget_skip.load() + 1;  // the run, then its last call
    weight += call(rest, s, h_).weight;
    calls += 2000 + rest;
  }
  // About 800 records at 0.001 and 400 run ends: standard error about 3.5 %.
  EXPECT_NEAR(weight / static_cast<double>(calls), 1.0, 0.15);
}

TEST_F(BudgetSkip, WithoutABudgetEveryCallIsTaken) {
  const Calls before = call(1000, s_, h_);
  EXPECT_EQ(before.taken, 1000u);
  perfhat::budget::publish({1.0, 1.0});
  const Calls c = call(1000, s_, h_);
  EXPECT_EQ(c.taken, 1000u);
  EXPECT_EQ(counted(s_), 2000u);
}

TEST_F(BudgetSkip, ANewRateTakesEffectAtTheEndOfTheRunningSkip) {
  perfhat::budget::publish({1.0, 0.001});
  call(100000, s_, h_);
  // Back to every call: the run in progress (mean 999 calls) ends, then every call is taken.
  perfhat::budget::publish({1.0, 1.0});
  const uint64_t remaining = s_.budget_skip.load();
  const Calls c = call(remaining + 500, s_, h_);
  EXPECT_EQ(c.taken, 500u);
  EXPECT_EQ(counted(s_), 100000u + remaining + 500);
  // And down again: with no run in progress, the first call is a fresh draw, not a certain take.
  perfhat::budget::publish({1.0, 0.001});
  uint64_t first_taken = 0;
  for (int i = 0; i < 2000; ++i) {
    Slot s;
    first_taken += call(1, s, h_).taken;
  }
  EXPECT_LT(first_taken, 20u);  // p = 0.001: about 2 of 2000
}

// Probing mode's untraced classes run at rate 0 (runs of kMaxRun calls ending in a fresh draw);
// once a later plan traces the class, the thread's run in progress ends within kMaxRun calls and
// every call after it is taken, with no other thread writing the slot; every call stays counted.
TEST_F(BudgetSkip, AClassAtRateZeroIsTakenWithinAMaxRunOfThePlanThatTracesIt) {
  using perfhat::budget::kMaxRun;
  perfhat::budget::publish({1.0, 0.0});
  EXPECT_EQ(call(100000 + 7, s_, h_).taken, 0u);
  const uint32_t left = s_.budget_skip.load();
  ASSERT_GT(left, 0u);  // inside a run
  ASSERT_LE(left, kMaxRun);
  perfhat::budget::publish({1.0, 1.0});
  EXPECT_EQ(call(left, s_, h_).taken, 0u);  // the run's rest: passed over, counted
  EXPECT_EQ(counted(s_), 100000u + 7 + left);
  const Calls c = call(500, s_, h_);
  EXPECT_EQ(c.taken, 500u);
  EXPECT_DOUBLE_EQ(c.weight, 500.0);  // taken at rate 1: weight 1 each
  EXPECT_EQ(counted(s_), 100000u + 7 + left + 500);
}

// Runs are capped at kMaxRun calls, the longer ones ending in a fresh draw: at rate 0.001 (mean
// run 999 calls) most runs are capped, and the taken calls still estimate the calls without
// bias (a geometric skip is memoryless: the draw after the cap is the rest of the same run).
TEST_F(BudgetSkip, CappedRunsKeepTheEstimateUnbiased) {
  using perfhat::budget::kMaxRun;
  perfhat::budget::publish({1.0, 0.001});
  constexpr uint64_t kCalls = 4000000;
  uint32_t longest = 0;
  Calls c;
  for (uint64_t i = 0; i < kCalls; i += 1000) {
    const Calls part = call(1000, s_, h_);
    c.taken += part.taken;
    c.weight += part.weight;
    longest = std::max(longest, s_.budget_run.load());
  }
  EXPECT_EQ(longest, kMaxRun);
  // Binomial(4e6, 0.001): 4000 taken, sd 63; weighted 1000 each.
  EXPECT_NEAR(static_cast<double>(c.taken), 4000, 380);
  EXPECT_NEAR(c.weight / static_cast<double>(c.taken), 1000, 0.01);  // 1 / float(0.001)
  EXPECT_EQ(counted(s_), kCalls);
}

// A run drawn at the old rate ends within kMaxRun calls of a rate change (in its own end, worth
// 1 / the old rate, or in a fresh draw); every call after it is drawn at the new rate.
TEST_F(BudgetSkip, ARunDrawnAtTheOldRateEndsWithinAMaxRun) {
  using perfhat::budget::kMaxRun;
  perfhat::budget::publish({1.0, 0.001});
  uint64_t calls = 0;
  do {
    call(1, s_, h_);
    ++calls;
  } while (s_.budget_skip.load() < 10);  // a run in progress, drawn at 0.001
  perfhat::budget::publish({1.0, 0.5});
  call(kMaxRun + 1, s_, h_);  // the old run's rest and its end, whatever its length
  calls += kMaxRun + 1;
  const Calls c = call(4000, s_, h_);
  // Binomial(4000, 0.5) taken at weight 2 each: none carries the old rate's 1000.
  EXPECT_NEAR(static_cast<double>(c.taken), 2000, 200);
  EXPECT_DOUBLE_EQ(c.weight, 2.0 * static_cast<double>(c.taken));
  EXPECT_EQ(counted(s_), calls + 4000);
}

}  // namespace
