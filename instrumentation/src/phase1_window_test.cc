// Tigris phase 1 in counting windows (phase1_window.h): on a fixed call stream, the selection
// from windowed, scaled counts is the selection from counting every call.
#include "phase1_window.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tigris.h"
#include "tigris_dsl.h"

namespace {

using perfhat::detail::CountedTime;
using perfhat::detail::scale_phase1_metrics;
using perfhat::detail::WindowBound;

// Windowed functions (XRay sleds) called every kPeriods[i] ticks, and one function phase 1 always
// counts (a probe macro's site) called every kAlwaysPeriod ticks, which is what unscaled window
// counts would misrank.
constexpr int kPeriods[] = {1, 2, 4, 5, 10, 20, 25, 40, 50, 100, 200, 500};
constexpr size_t kWindowed = std::size(kPeriods);
constexpr int kAlwaysPeriod = 8;
constexpr uint64_t kTicks = 100000, kWindow = 1000, kClosed = 9000;  // duty 0.1

std::vector<bool> select(const std::vector<double>& counts) {
  std::vector<perfhat::tigris::EventMetrics> events;
  for (double n : counts) {
    perfhat::tigris::EventMetrics e;
    e.metrics[std::string(perfhat::tigris::metric::kInvocationFrequency)] = n;
    events.push_back(std::move(e));
  }
  auto filter = perfhat::tigris::parse("most frequent");
  return perfhat::tigris::classify(*filter.root, events, perfhat::tigris::Bindings::defaults())
      .relevant;
}

// Counts of the windowed functions, scaled by `counted` at `now` (or not), then the always-counted
// function's.
std::vector<double> metrics_of(const std::vector<uint64_t>& counts, const CountedTime* counted,
                               uint64_t now) {
  std::vector<double> out;
  for (size_t i = 0; i < counts.size(); ++i) {
    perfhat::tigris::EventMetrics e;
    e.metrics[std::string(perfhat::tigris::metric::kInvocationFrequency)] =
        static_cast<double>(counts[i]);
    if (counted != nullptr && i < kWindowed) scale_phase1_metrics(e, counted->scale(i, now));
    out.push_back(e.metrics.begin()->second);
  }
  return out;
}

TEST(Phase1Window, WindowedScaledCountsSelectWhatCountingEveryCallSelects) {
  std::vector<uint64_t> all(kWindowed + 1, 0), windowed(kWindowed + 1, 0);
  CountedTime counted;
  std::vector<bool> kept(kWindowed, false);
  counted.open(0);
  int closes = 0;
  for (uint64_t t = 0; t < kTicks; ++t) {
    const uint64_t phase = t % (kWindow + kClosed);
    if (phase == 0) counted.open(t);
    if (phase == kWindow) {
      // The cycle at the window's end selects from the scaled counts so far; the selected
      // functions stay counted until the next window.
      const std::vector<bool> sel = select(metrics_of(windowed, &counted, t));
      kept.assign(sel.begin(), sel.begin() + kWindowed);
      counted.close(t, kept);
      ++closes;
    }
    for (size_t i = 0; i < kWindowed; ++i) {
      if (t % kPeriods[i] != 0) continue;
      ++all[i];
      if (counted.is_open() || kept[i]) ++windowed[i];
    }
    if (t % kAlwaysPeriod == 0) {
      ++all[kWindowed];
      ++windowed[kWindowed];
    }
  }
  ASSERT_EQ(closes, 10);
  std::vector<double> always(all.begin(), all.end());
  const std::vector<bool> expected = select(always);
  EXPECT_EQ(select(metrics_of(windowed, &counted, kTicks)), expected);
  // The stream's shape: some functions are left out between windows and some are kept...
  EXPECT_LT(windowed[kWindowed - 1], all[kWindowed - 1]);
  EXPECT_EQ(windowed[0] * 10 > all[0] * 9, kept[0]);
  size_t selected = 0;
  for (bool b : expected) selected += b ? 1 : 0;
  EXPECT_GT(selected, 0u);
  EXPECT_LT(selected, expected.size());
  // ... and without the scale the always-counted function would rank differently.
  EXPECT_NE(select(metrics_of(windowed, nullptr, kTicks)), expected);
}

// The same stream, but a function leaves each window once it has given kLeaveAfter calls of it
// (its sleds unpatched until the next window), once half the window has passed (a check before
// that starts its calls' count again): its count then covers only part of the window, and the
// scale by the time it was counted still gives the selection of counting every call.
TEST(Phase1Window, FunctionsLeavingAWindowEarlySelectWhatCountingEveryCallSelects) {
  constexpr uint64_t kLeaveAfter = 30;
  std::vector<uint64_t> all(kWindowed + 1, 0), windowed(kWindowed + 1, 0);
  std::vector<uint64_t> in_window(kWindowed, 0);
  CountedTime counted;
  std::vector<bool> kept(kWindowed, false), left(kWindowed, false);
  counted.open(0);
  size_t left_early = 0;
  for (uint64_t t = 0; t < kTicks; ++t) {
    const uint64_t phase = t % (kWindow + kClosed);
    if (phase == 0) {
      counted.open(t);
      in_window.assign(kWindowed, 0);
      left.assign(kWindowed, false);
    }
    if (phase == kWindow) {
      const std::vector<bool> sel = select(metrics_of(windowed, &counted, t));
      kept.assign(sel.begin(), sel.begin() + kWindowed);
      counted.close(t, kept);
    }
    for (size_t i = 0; i < kWindowed; ++i) {
      if (t % kPeriods[i] != 0) continue;
      ++all[i];
      if (counted.is_open() ? left[i] : !kept[i]) continue;
      ++windowed[i];
      if (counted.is_open() && ++in_window[i] == kLeaveAfter) {
        in_window[i] = 0;
        if (!WindowBound{0, kWindow}.may_leave(t - phase, t, 0)) continue;
        ASSERT_TRUE(counted.leave(i, t + 1));  // after this call
        left[i] = true;
        ++left_early;
      }
    }
    if (t % kAlwaysPeriod == 0) {
      ++all[kWindowed];
      ++windowed[kWindowed];
    }
  }
  std::vector<double> always(all.begin(), all.end());
  const std::vector<bool> expected = select(always);
  EXPECT_EQ(select(metrics_of(windowed, &counted, kTicks)), expected);
  // Functions called more than kLeaveAfter times a window left every window early (the seven
  // of period 1..25: 70 leaves), and unscaled counts would select otherwise.
  EXPECT_EQ(left_early, 70u);
  EXPECT_NE(select(metrics_of(windowed, nullptr, kTicks)), expected);
}

// One function's calls at `times` (ns, sorted) inside the first window (time bound window_ns):
// it leaves as xray_window.cc lets it (a check every k of its calls, which lets it leave only
// once half the window has passed), and its count scaled by its counted time is read at `end`.
double estimate(const std::vector<uint64_t>& times, uint64_t window_ns, uint32_t k, uint64_t end) {
  CountedTime c;
  c.open(0);
  uint64_t counted = 0;
  uint32_t countdown = k;
  for (uint64_t t : times) {
    ++counted;
    if (--countdown > 0) continue;
    countdown = k;
    if (WindowBound{0, window_ns}.may_leave(0, t, 0) && c.leave(0, t + 1)) break;
  }
  return static_cast<double>(counted) * c.scale(0, end);
}

// `n` calls evenly spread over [from, to) ns.
std::vector<uint64_t> spread(uint64_t n, uint64_t from, uint64_t to,
                             std::vector<uint64_t> out = {}) {
  for (uint64_t j = 0; j < n; ++j) out.push_back(from + (to - from) * j / n);
  return out;
}

// A 3 ms process that ends inside its first 5 ms window, functions leaving after 1,024 calls: a
// function whose calls came early is not taken at its early rate for the whole process (it was
// estimated 11.8x its calls when it could leave at its 1,024th), one whose calls came late is
// not estimated below half its calls, and an even one stays exact.
TEST(Phase1Window, AFunctionLeavingEarlyIsEstimatedWithinTwiceItsCalls) {
  constexpr uint64_t kMs = 1000000, kWindowNs = 5 * kMs, kEnd = 3 * kMs;
  constexpr uint32_t kCalls = 1024;
  const auto front = spread(2000, 0, kMs / 2);
  const auto back = spread(2000, 2 * kMs, kEnd, spread(100, 0, kMs / 2));
  const auto even = spread(2000, 0, kEnd);
  for (const auto& [calls, name] : {std::pair{front, "front-loaded"},
                                    std::pair{back, "back-loaded"}, std::pair{even, "even"}}) {
    const double n = estimate(calls, kWindowNs, kCalls, kEnd);
    const auto truth = static_cast<double>(calls.size());
    EXPECT_LE(n, 2 * truth) << name;
    EXPECT_GE(n, truth / 2) << name;
  }
  EXPECT_DOUBLE_EQ(estimate(even, kWindowNs, kCalls, kEnd), 2000);
  EXPECT_DOUBLE_EQ(estimate(front, kWindowNs, kCalls, kEnd), 2000);
  // Over a whole window, a function leaving past its half is over-estimated at most 2x.
  const auto burst = spread(kCalls, kWindowNs / 2, kWindowNs / 2 + kMs / 100);
  EXPECT_LE(estimate(burst, kWindowNs, kCalls, kWindowNs), 2.0 * kCalls);
  EXPECT_GT(estimate(burst, kWindowNs, kCalls, kWindowNs), 1.9 * kCalls);
}

TEST(Phase1Window, ScaleIsTheInverseOfTheCountedShare) {
  CountedTime c;
  EXPECT_EQ(c.scale(0, 100), 1);  // no window yet: phase 1 counts everything
  c.open(100);
  EXPECT_EQ(c.scale(0, 150), 1);  // inside the first window
  c.close(200, {true, false});    // function 0 kept, function 1 left out
  EXPECT_EQ(c.scale(0, 600), 1);
  EXPECT_DOUBLE_EQ(c.scale(1, 600), 5.0);  // 100 of 500 counted
  EXPECT_DOUBLE_EQ(c.scale(7, 600), 5.0);  // a function not seen by the close: windows only
  c.open(600);
  c.close(700, {false, false});
  EXPECT_DOUBLE_EQ(c.scale(0, 800), 700.0 / 600.0);  // windows 200 + kept 400 of 700
  EXPECT_DOUBLE_EQ(c.scale(1, 800), 3.5);            // 200 of 700
}

TEST(Phase1Window, AFunctionThatLeftAWindowIsCountedForThePartBeforeItLeft) {
  CountedTime c;
  EXPECT_FALSE(c.leave(0, 50));  // no window open: nothing
  c.open(100);
  EXPECT_TRUE(c.leave(0, 125));
  EXPECT_FALSE(c.leave(0, 190));  // the first leave of a window counts (threads leaving together)
  EXPECT_DOUBLE_EQ(c.scale(0, 150), 2.0);  // 25 of 50 counted, window still open
  EXPECT_EQ(c.scale(1, 150), 1);
  c.close(200, {true, false});             // function 0 kept after the window all the same
  EXPECT_DOUBLE_EQ(c.scale(0, 200), 4.0);  // 25 of 100
  EXPECT_DOUBLE_EQ(c.scale(0, 300), 200.0 / 125.0);  // and 100 kept after it
  c.open(300);                                       // a new window counts it again
  EXPECT_DOUBLE_EQ(c.scale(0, 350), 250.0 / 175.0);
  EXPECT_DOUBLE_EQ(c.scale(1, 350), 250.0 / 150.0);
}

TEST(Phase1Window, MetricsScaleCountsUpAndTheInterArrivalTimeDown) {
  namespace m = perfhat::tigris::metric;
  perfhat::tigris::EventMetrics e;
  e.metrics[std::string(m::kInvocationFrequency)] = 10;
  e.metrics[std::string(m::kErrorLevel)] = 2;
  e.metrics[std::string(m::kConcurrencyLevel)] = 0.5;
  e.metrics[std::string(m::kInterArrivalTime)] = 400;
  e.metrics[std::string(m::kExecutionTime)] = 70;
  scale_phase1_metrics(e, 4);
  EXPECT_EQ(e.metrics[std::string(m::kInvocationFrequency)], 40);
  EXPECT_EQ(e.metrics[std::string(m::kErrorLevel)], 8);
  EXPECT_EQ(e.metrics[std::string(m::kConcurrencyLevel)], 2);
  EXPECT_EQ(e.metrics[std::string(m::kInterArrivalTime)], 100);
  EXPECT_EQ(e.metrics[std::string(m::kExecutionTime)], 70);
}

// A window is over at its length in calls or in time, whichever comes first; a bound of 0 is
// none. Times are given (an injected clock), not read.
TEST(Phase1Window, BoundClosesAtItsCallsOrItsTimeWhicheverComesFirst) {
  using perfhat::detail::WindowBound;
  const WindowBound both{65536, 5'000'000};
  EXPECT_FALSE(both.reached_calls(65535));
  EXPECT_TRUE(both.reached_calls(65536));
  EXPECT_FALSE(both.reached_time(1'000'000, 5'999'999));  // 4.999999 ms after it opened
  EXPECT_TRUE(both.reached_time(1'000'000, 6'000'000));
  EXPECT_FALSE(both.reached_time(1'000'000, 999'999));  // a clock read before the open's
  const WindowBound calls_only{4096, 0};
  EXPECT_FALSE(calls_only.reached_time(0, UINT64_MAX));
  EXPECT_TRUE(calls_only.reached_calls(4096));
  const WindowBound time_only{0, 1};
  EXPECT_FALSE(time_only.reached_calls(UINT64_MAX));
  EXPECT_TRUE(time_only.reached_time(7, 8));
}

// A function may leave a window from half its length (in time when it has a time bound, else in
// calls) until it is over.
TEST(Phase1Window, FunctionsMayLeaveFromHalfTheWindowUntilItIsOver) {
  using perfhat::detail::WindowBound;
  const WindowBound calls_only{4096, 0};
  EXPECT_FALSE(calls_only.may_leave(0, 1, 2047));
  EXPECT_TRUE(calls_only.may_leave(0, 1, 2048));
  EXPECT_TRUE(calls_only.may_leave(0, 1, 4095));
  EXPECT_FALSE(calls_only.may_leave(0, 1, 4096));
  const WindowBound both{65536, 5'000'000};
  EXPECT_FALSE(both.may_leave(1'000'000, 3'499'999, 60000));  // not half its time yet
  EXPECT_TRUE(both.may_leave(1'000'000, 3'500'000, 10));
  EXPECT_FALSE(both.may_leave(1'000'000, 6'000'000, 10));     // over in time
  EXPECT_FALSE(both.may_leave(1'000'000, 3'500'000, 65536));  // over in calls
  EXPECT_FALSE(both.may_leave(1'000'000, 999'999, 10));       // a clock read before the open's
}

}  // namespace
