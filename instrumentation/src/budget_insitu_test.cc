// The collection budget prices a recorded call and a request root by what their probes cost where
// they ran (probe_self_timing.h, budget_insitu.h), not by the start-up calibration's warm loops:
// the probes time one in 16 of their clocked entries, the controller turns the sums into prices
// over its sliding window, and falls back to the calibration while too few calls were timed.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "budget_controller.h"
#include "budget_hand_ticked.h"
#include "budget_insitu.h"
#include "budget_runtime.h"
#include "engine.h"
#include "perfhat/memory_exporter.hpp"
#include "perfhat/perfhat.hpp"
#include "probe_self_timing.h"

namespace insitutest {
[[gnu::noinline]] void recorded() { PERFHAT_FUNCTION(); }
[[gnu::noinline]] void handle() {
  PERFHAT_REQUEST("insitu-request");
  recorded();
}
}  // namespace insitutest

namespace perfhat::budget {
namespace {

using detail::kSelfTimedRecord;
using detail::kSelfTimedRequest;
using detail::SelfTimedKind;
using detail::SelfTimingTotals;

// The totals so far, as the probes sum them: each add is n more calls of one length.
struct Running {
  SelfTimingTotals t;
  const SelfTimingTotals& add(uint64_t n, uint64_t ticks, SelfTimedKind kind = kSelfTimedRecord) {
    t.add(kind, ticks, n);
    return t;
  }
};

// The timed calls' mean over the sliding window, once it holds enough of them; the calibration
// before that and as a floor; each kind priced on its own.
TEST(BudgetInSitu, PricesAreTheTimedMeansOverTheSlidingWindow) {
  InSituPrices p;
  Running r;
  constexpr double kCalibrated = 50e-9;
  p.add(r.t, 0.5, 3);  // the starting totals
  EXPECT_DOUBLE_EQ(p.target_s(kSelfTimedRecord, kCalibrated), kCalibrated);
  p.add(r.add(10, 800), 0.5, 3);  // 10 calls at 400 ns: too few
  EXPECT_DOUBLE_EQ(p.target_s(kSelfTimedRecord, kCalibrated), kCalibrated);
  r.add(40, 1800, kSelfTimedRequest);
  p.add(r.add(30, 400), 0.5, 3);  // 30 more at 200 ns
  EXPECT_EQ(p.calls(kSelfTimedRecord), 40u);
  EXPECT_NEAR(p.target_s(kSelfTimedRecord, kCalibrated), (10 * 400e-9 + 30 * 200e-9) / 40, 1e-15);
  EXPECT_NEAR(p.target_s(kSelfTimedRequest, kCalibrated), 900e-9, 1e-15);
  // Three windows later the first ones are out of the window: only 100 ns calls. Under a
  // calibration of 150 ns, the calibration is the price (the timed interval leaves out the
  // probe's inline part, which the calibration includes).
  for (int i = 1; i <= 3; ++i) p.add(r.add(40, 200), 0.5, 3);
  EXPECT_EQ(p.calls(kSelfTimedRecord), 120u);
  EXPECT_NEAR(p.mean_s(kSelfTimedRecord), 100e-9, 1e-15);
  EXPECT_NEAR(p.target_s(kSelfTimedRecord, kCalibrated), 100e-9, 1e-15);
  EXPECT_DOUBLE_EQ(p.target_s(kSelfTimedRecord, 150e-9), 150e-9);
}

// A few timed calls a preemption or an interrupt lengthened, each under note_self_timing's cap,
// do not move the price: one 40 us call among 67 of 400 ns would raise their mean by 140 %. The
// long ones of a service whose probes are all slow stay in (the cap follows the median).
TEST(BudgetInSitu, PricesLeaveOutTheFewCallsSomethingElseLengthened) {
  constexpr double kCalibrated = 50e-9;
  InSituPrices p;
  Running r;
  p.add(r.t, 1.0, 3);
  r.add(67, 400);
  p.add(r.add(1, 40000), 1.0, 3);
  EXPECT_NEAR(p.mean_s(kSelfTimedRecord), (67 * 400e-9 + 40e-6) / 68, 1e-15);
  EXPECT_NEAR(p.target_s(kSelfTimedRecord, kCalibrated), 400e-9, 1e-15);

  InSituPrices slow;  // every call 30 us, some 60 us: all of them are the probes' cost
  Running s;
  slow.add(s.t, 1.0, 3);
  s.add(50, 30000);
  slow.add(s.add(10, 60000), 1.0, 3);
  EXPECT_NEAR(slow.target_s(kSelfTimedRecord, kCalibrated), (50 * 30e-6 + 10 * 60e-6) / 60, 1e-15);
}

// A window moves a price by at most twice or half: the first timed price (16 times the
// calibration's) is reached in four windows, and one window of ten times the timed calls at ten
// times the price doubles the price, no more, and is gone the window after it (a sliding window
// of one window here, so the target follows each window).
TEST(BudgetInSitu, APriceMovesAtMostTwofoldAWindow) {
  constexpr double kCalibrated = 50e-9;
  InSituPrices p;
  Running r;
  p.add(r.t, 1.0, 3);
  EXPECT_DOUBLE_EQ(p.step(kSelfTimedRecord, kCalibrated), kCalibrated);  // nothing timed yet
  p.add(r.add(40, 800), 1.0, 3);
  EXPECT_NEAR(p.target_s(kSelfTimedRecord, kCalibrated), 800e-9, 1e-15);
  EXPECT_NEAR(p.step(kSelfTimedRecord, kCalibrated), 100e-9, 1e-15);
  for (double want : {200e-9, 400e-9, 800e-9, 800e-9}) {
    p.add(r.add(40, 800), 1.0, 3);
    EXPECT_NEAR(p.step(kSelfTimedRecord, kCalibrated), want, 1e-15);
  }
  EXPECT_DOUBLE_EQ(p.step(kSelfTimedRequest, kCalibrated), kCalibrated);  // each kind its own

  InSituPrices one;  // the target is the last window alone
  Running o;
  one.add(o.t, 1.0, 1);
  double price = 0;
  for (int i = 0; i < 5; ++i) {
    one.add(o.add(40, 800), 1.0, 1);
    price = one.step(kSelfTimedRecord, kCalibrated);
  }
  EXPECT_NEAR(price, 800e-9, 1e-15);
  one.add(o.add(400, 8000), 1.0, 1);  // a burst of slow timed calls
  EXPECT_NEAR(one.target_s(kSelfTimedRecord, kCalibrated), 8000e-9, 1e-15);
  EXPECT_NEAR(one.step(kSelfTimedRecord, kCalibrated), 1600e-9, 1e-15);
  one.add(o.add(40, 800), 1.0, 1);
  EXPECT_NEAR(one.step(kSelfTimedRecord, kCalibrated), 800e-9, 1e-15);
  one.add(o.add(40, 100), 1.0, 1);  // down: halved at most, and never under the calibration
  EXPECT_NEAR(one.step(kSelfTimedRecord, kCalibrated), 400e-9, 1e-15);
  for (int i = 0; i < 3; ++i) {
    one.add(o.add(40, 100), 1.0, 1);
    price = one.step(kSelfTimedRecord, kCalibrated);
  }
  EXPECT_NEAR(price, 100e-9, 1e-15);
  one.add(o.add(40, 20), 1.0, 1);
  EXPECT_NEAR(one.step(kSelfTimedRecord, kCalibrated), kCalibrated, 1e-15);
}

// A calibration that says 0 (a report no dearer than detection) still bounds the step: the price
// starts from kMinPriceS and doubles at most, and a window with too few timed calls (a target of
// 0) halves it, down to kMinPriceS, never to 0 (from which the next window would be unlimited).
TEST(BudgetInSitu, AZeroCalibrationStillLimitsTheStep) {
  constexpr double kMin = InSituPrices::kMinPriceS;
  InSituPrices p;
  Running r;
  p.add(r.t, 1.0, 1);
  EXPECT_DOUBLE_EQ(p.step(kSelfTimedRecord, 0), kMin);  // nothing timed: the floor, not 0
  p.add(r.add(40, 800), 1.0, 1);
  EXPECT_NEAR(p.step(kSelfTimedRecord, 0), 2 * kMin, 1e-18);
  p.add(r.add(40, 800), 1.0, 1);
  EXPECT_NEAR(p.step(kSelfTimedRecord, 0), 4 * kMin, 1e-18);
  p.add(r.t, 1.0, 1);  // no timed calls: the target is the calibration's 0
  EXPECT_NEAR(p.step(kSelfTimedRecord, 0), 2 * kMin, 1e-18);
  for (int i = 0; i < 3; ++i) {
    p.add(r.t, 1.0, 1);
    EXPECT_GE(p.step(kSelfTimedRecord, 0), kMin);
  }
  p.add(r.add(40, 800), 1.0, 1);
  EXPECT_NEAR(p.step(kSelfTimedRecord, 0), 2 * kMin, 1e-18);
}

// The probes' side, on an injected clock: every clock read on the test's thread stands for
// kReadNs of the probe's own work (the cost model), reads on other threads cost nothing. A
// recorded call's probe reads the clock twice inside its timed intervals (its start and end
// reads, each with the fenced read that opens or closes an interval), so each timed call sums
// 2 x kReadNs. One in kSelfTimingPeriod clocked entries is timed, and only with a budget on.
constexpr uint64_t kReadNs = 700;
std::atomic<uint64_t> g_clock_ns{1'000'000'000};
thread_local uint64_t t_read_ns = 0;
uint64_t costly_reads() { return g_clock_ns.fetch_add(t_read_ns) + t_read_ns; }

class BudgetInSituProbes : public ::testing::Test {
 protected:
  void SetUp() override {
    previous_ = detail::g_tick_source.load();
    detail::set_tick_source(&costly_reads);  // before init: ticks are nanoseconds
    Config c;
    c.sampler = "full";  // every call recorded, every request root opens its context
    c.service_name = "insitu-test";
    ASSERT_TRUE(init(c, std::make_shared<MemoryExporter>())) << last_error();
  }
  void TearDown() override {
    detail::g_self_timing.store(false);
    detail::g_self_timing_fence.store(0);
    detail::g_self_timing_entry_fence.store(0);
    shutdown();
    detail::set_tick_source(previous_);
  }
  // `n` requests, each one root and one recorded call, on a thread of its own (a fresh count of
  // entries to the next timed one).
  static void serve(int n) {
    std::thread([n] {
      t_read_ns = kReadNs;
      for (int i = 0; i < n; ++i) insitutest::handle();
    }).join();
  }
  uint64_t (*previous_)() = nullptr;
};

TEST_F(BudgetInSituProbes, ProbesTimeTheirOwnWorkOnceInSixteenEntries) {
  const SelfTimingTotals before = detail::self_timing_totals();
  serve(160);  // no budget: nothing timed
  const SelfTimingTotals off = detail::self_timing_totals();
  EXPECT_EQ(off.calls[kSelfTimedRecord], before.calls[kSelfTimedRecord]);
  EXPECT_EQ(off.calls[kSelfTimedRequest], before.calls[kSelfTimedRequest]);

  detail::g_self_timing.store(true);  // what a configured budget sets
  serve(1600);                        // 3,200 clocked entries: about 200 timed, of both kinds
  const SelfTimingTotals on = detail::self_timing_totals();
  const uint64_t records = on.calls[kSelfTimedRecord] - off.calls[kSelfTimedRecord];
  const uint64_t requests = on.calls[kSelfTimedRequest] - off.calls[kSelfTimedRequest];
  EXPECT_EQ(on.dropped, off.dropped);
  EXPECT_GT(records + requests, 140u);
  EXPECT_LT(records + requests, 260u);
  EXPECT_GT(records, 50u);
  EXPECT_GT(requests, 50u);
  EXPECT_EQ(on.ticks[kSelfTimedRecord] - off.ticks[kSelfTimedRecord], records * 2 * kReadNs);
  // A request root's context reads the clock no more than a recorded call does: at least the
  // same two intervals.
  EXPECT_GE(on.ticks[kSelfTimedRequest] - off.ticks[kSelfTimedRequest], requests * 2 * kReadNs);
}

// The clock reads' own cost is the least of a few back-to-back reads of each pattern (fenced to
// fenced, fenced to plain): each read on the test's thread costs kReadNs, and every third one
// 5 us more (an interrupt), so the least of each is kReadNs apart.
thread_local uint64_t t_reads = 0;
uint64_t jittery_reads() {
  const uint64_t n = t_read_ns + (++t_reads % 3 == 0 ? 5000 : 0);
  return g_clock_ns.fetch_add(n) + n;
}

TEST_F(BudgetInSituProbes, TheFencesCostIsTheLeastBackToBackFencedPair) {
  t_read_ns = kReadNs;
  detail::set_tick_source(&jittery_reads);
  const detail::SelfTimingFences fences = detail::measure_fence_ticks();
  detail::set_tick_source(&costly_reads);
  t_read_ns = 0;
  EXPECT_EQ(fences.pair, kReadNs);
  EXPECT_EQ(fences.entry, kReadNs);
}

// Each timed call leaves out its clock reads' cost: a recorded call's entry interval ends at a
// plain read (the entry pattern's cost), its exit interval at a fenced one (a fenced pair's); a
// passed entry's one interval is a fenced pair. Reads dearer than the intervals leave 0, and the
// call is still counted.
TEST_F(BudgetInSituProbes, TimedIntervalsLeaveOutTheClockReadsCost) {
  detail::g_self_timing.store(true);
  constexpr uint64_t kPair = 300, kEntry = 100;
  detail::g_self_timing_fence.store(kPair);
  detail::g_self_timing_entry_fence.store(kEntry);
  const SelfTimingTotals before = detail::self_timing_totals();
  serve(1600);
  const SelfTimingTotals mid = detail::self_timing_totals();
  const uint64_t records = mid.calls[kSelfTimedRecord] - before.calls[kSelfTimedRecord];
  EXPECT_GT(records, 50u);
  EXPECT_EQ(mid.ticks[kSelfTimedRecord] - before.ticks[kSelfTimedRecord],
            records * (2 * kReadNs - kPair - kEntry));
  detail::note_self_timing(detail::kSelfTimedPassed, 1000);
  const SelfTimingTotals passed = detail::self_timing_totals();
  EXPECT_EQ(passed.ticks[detail::kSelfTimedPassed] - mid.ticks[detail::kSelfTimedPassed],
            1000 - kPair);
  detail::g_self_timing_fence.store(2 * kReadNs);
  detail::g_self_timing_entry_fence.store(0);
  serve(1600);
  const SelfTimingTotals after = detail::self_timing_totals();
  EXPECT_GT(after.calls[kSelfTimedRecord] - mid.calls[kSelfTimedRecord], 50u);
  EXPECT_EQ(after.ticks[kSelfTimedRecord], mid.ticks[kSelfTimedRecord]);
  detail::g_self_timing_entry_fence.store(0);
}

// Entries that leave Probe::begin unrecorded do work too (a redraw after a capped skip run takes
// two logarithms; a request root passed over draws): they are timed as their own kind. At rate 0
// every request root is passed over at its entry, and one in 16 entries is timed.
TEST_F(BudgetInSituProbes, EntriesThatLeaveUnrecordedAreTimedToo) {
  detail::g_self_timing.store(true);
  publish(std::vector<double>(4096, 0.0));  // every site at rate 0
  const SelfTimingTotals before = detail::self_timing_totals();
  serve(1600);  // 1,600 roots passed over at entry, the calls inside in skip runs of 1,024
  const SelfTimingTotals after = detail::self_timing_totals();
  clear();
  const uint64_t passes =
      after.calls[detail::kSelfTimedPassed] - before.calls[detail::kSelfTimedPassed];
  EXPECT_GT(passes, 60u);
  EXPECT_LT(passes, 160u);
  EXPECT_EQ(after.calls[kSelfTimedRecord], before.calls[kSelfTimedRecord]);
  EXPECT_EQ(after.calls[kSelfTimedRequest], before.calls[kSelfTimedRequest]);
  // At least the closing clock read, on the application thread.
  EXPECT_GE(after.ticks[detail::kSelfTimedPassed] - before.ticks[detail::kSelfTimedPassed],
            passes * kReadNs);
}

// A thread's first clocked entry (the one that faults in its slots and rings) is timed no more
// often than any other: 64 threads of one request each, two clocked entries, time a few of them
// (each entry about one in 16), not the first of every thread.
TEST_F(BudgetInSituProbes, AThreadsFirstEntryIsNotAlwaysTimed) {
  detail::g_self_timing.store(true);
  const SelfTimingTotals before = detail::self_timing_totals();
  for (int i = 0; i < 64; ++i) serve(1);
  const SelfTimingTotals after = detail::self_timing_totals();
  const uint64_t timed = after.calls[kSelfTimedRecord] + after.calls[kSelfTimedRequest] -
                         before.calls[kSelfTimedRecord] - before.calls[kSelfTimedRequest];
  EXPECT_LT(timed, 32u);
}

// The controller's side: with the calibration saying 50 ns a report, calls the probes timed at
// 20,000 ticks each become the price of a recorded call (in the costs the plan is solved with and
// in the status), once 32 of them are in the sliding window; before that the calibration's price
// stands, and a call timed over the cap (a preempted probe) is not summed.
double g_nspt = 0;
Costs calibrated(double ns_per_tick, uint32_t) {
  g_nspt = ns_per_tick;
  Costs c;
  c.detect_s = 5e-9;
  c.report_s = 50e-9;
  return c;
}
double g_insitu_s = 0;
double insituWall() { return g_insitu_s += 1; }
double insituCpu() { return g_insitu_s; }
double noCollector() { return 0; }

// The controller with these clocks and this calibration (budget_hand_ticked.h).
class InSituHandTicked : public HandTicked {
 public:
  explicit InSituHandTicked(const Settings& s)
      : HandTicked(s, &calibrated, {&insituWall, &insituCpu, &noCollector}) {}
};

// A recorded request root is charged once, at its request's price: the root's timed intervals
// (kSelfTimedRequest) hold its record's work as well as its context's, so the root is not also
// one of the recorded calls charged a report. 20 requests, each a recorded root and a recorded
// call, before the first plan (every call recorded): 20 reports and 20 requests, at the
// calibration's 50 ns (too few timed calls for an in-situ price).
TEST_F(BudgetInSituProbes, ARecordedRequestRootIsChargedOnceAtItsRequestsPrice) {
  Controller& c = Controller::get();
  Settings s;
  s.enabled = true;
  const InSituHandTicked hand(s);
  ASSERT_TRUE(hand.configured()) << hand.error();
  c.tick();  // calibrates; the first window starts
  serve(20);
  c.background_tick();  // where the engine's thread may tick: skipped, the test ticks alone
  c.tick();
  const nlohmann::json status = nlohmann::json::parse(c.status_json(true));
  EXPECT_LT(status["in_situ"]["timed_reports"].get<int>() +
                status["in_situ"]["timed_requests"].get<int>(),
            32);
  EXPECT_NEAR(status["window_cost_s"]["requests"].get<double>(), 20 * 50e-9, 1e-12)
      << status.dump();
  EXPECT_NEAR(status["window_cost_s"]["report"].get<double>(), 20 * 50e-9, 1e-12) << status.dump();
}

TEST(BudgetControllerInSitu, ChargesRecordsWhatTheirProbesCostWhereTheyRan) {
  Controller& c = Controller::get();
  Settings s;
  s.enabled = true;
  // Long enough that the timed calls stay in the sliding window while the price steps up to
  // theirs (a step of up to 2^10 at a tick a nanosecond).
  s.planner.windows = 20;
  const InSituHandTicked hand(s);
  ASSERT_TRUE(hand.configured()) << hand.error();
  EXPECT_TRUE(detail::g_self_timing.load());  // the probes time themselves under a budget
  c.tick();  // calibrates (and measures the clock reads' cost); the first window starts
  ASSERT_GT(g_nspt, 0);
  // Each timed call leaves out its clock reads' cost, measured with the calibration: a fenced
  // pair (the exit interval) and a fenced read to a plain one (the entry interval).
  const uint64_t pair = detail::g_self_timing_fence.load();
  const uint64_t entry = detail::g_self_timing_entry_fence.load();
  ASSERT_GT(pair, 0u);  // two fenced reads of a running clock
  ASSERT_LT(pair + entry, 5000u);
  const nlohmann::json first = nlohmann::json::parse(c.status_json(true));
  EXPECT_NEAR(first["in_situ"]["fence_ns"].get<double>(), static_cast<double>(pair) * g_nspt,
              1e-3 + static_cast<double>(pair) * g_nspt * 1e-5)
      << first.dump();
  EXPECT_NEAR(first["in_situ"]["entry_fence_ns"].get<double>(), static_cast<double>(entry) * g_nspt,
              1e-3 + static_cast<double>(entry) * g_nspt * 1e-5)
      << first.dump();
  const double in_situ_s = static_cast<double>(20000 - pair - entry) * g_nspt * 1e-9;
  for (int i = 0; i < 20; ++i) detail::note_self_timing(kSelfTimedRecord, 20000);
  c.tick();
  EXPECT_NEAR(c.costs().report_s, 50e-9, 1e-12) << c.status_json(true);  // 20 calls: too few
  for (int i = 0; i < 20; ++i) detail::note_self_timing(kSelfTimedRecord, 20000);
  const uint64_t cap = detail::g_self_timing_cap.load();
  ASSERT_GT(cap, 20000u);
  detail::note_self_timing(kSelfTimedRecord, cap + 1);  // preempted inside: not summed
  c.tick();
  const std::string status = c.status_json(true);
  // Toward the timed calls' price, at most twofold a window.
  EXPECT_NEAR(c.costs().report_s, 100e-9, 1e-12) << status;
  EXPECT_NE(status.find("\"timed_reports\":40"), std::string::npos) << status;
  for (int i = 0; i < 12 && c.costs().report_s < in_situ_s * (1 - 1e-6); ++i) {
    const double last = c.costs().report_s;
    c.tick();
    EXPECT_LE(c.costs().report_s, 2 * last * (1 + 1e-9));
  }
  EXPECT_NEAR(c.costs().report_s, in_situ_s, in_situ_s * 1e-6) << c.status_json(true);
  // Entries that left unrecorded: the last window's timed ones × the timing period, on top.
  EXPECT_EQ(nlohmann::json::parse(c.status_json(true))["window_cost_s"]["passed"], 0);
  for (int i = 0; i < 10; ++i) detail::note_self_timing(detail::kSelfTimedPassed, 20000);
  c.tick();
  const nlohmann::json after = nlohmann::json::parse(c.status_json(true));
  const double passed_s =
      10 * static_cast<double>(20000 - pair) * g_nspt * 1e-9 * detail::kSelfTimingPeriod;
  EXPECT_NEAR(after["window_cost_s"]["passed"].get<double>(), passed_s, passed_s * 1e-5)
      << after.dump();
  EXPECT_EQ(after["in_situ"]["timed_passes"], 10);
}

}  // namespace
}  // namespace perfhat::budget
