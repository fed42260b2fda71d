// Behavioural smoke test of the representativeness study: short runs through the real engine
// must show what the measurement relies on (full monitoring is the ground truth, none records
// nothing, the samplers stay within their rates). No timing is checked.
#include <gtest/gtest.h>

#include "representativeness_study.h"

namespace repstudy {
namespace {

Options quick() {
  Options o;
  o.segment_s = 0.3;
  o.typical_users = 1;
  o.peak_users = 3;
  return o;
}

TEST(Representativeness, UserScheduleHasTheThreeShapes) {
  Options o;
  o.segment_s = 6;
  EXPECT_EQ(users(kStationary, 0, 6, o), 2);
  EXPECT_EQ(users(kStationary, 5.9, 6, o), 2);
  EXPECT_EQ(users(kSeasonal, 0, 6, o), 2);    // wave starts at the typical level
  EXPECT_EQ(users(kSeasonal, 1.5, 6, o), 6);  // peaks mid-wave (period len/2)
  EXPECT_EQ(users(kSeasonal, 4.5, 6, o), 6);
  EXPECT_EQ(users(kBurst, 0.5, 6, o), 2);
  EXPECT_EQ(users(kBurst, 1.2, 6, o), 6);  // burst in the second half of each third
  EXPECT_EQ(users(kBurst, 1.8, 6, o), 2);  // and short: at most 0.5 s
}

TEST(Representativeness, FullMonitoringIsTheGroundTruth) {
  RunResult r = run_once(Mode::kFull, quick(), 1);
  EXPECT_EQ(r.counters.spans_dropped_ring + r.counters.spans_dropped_queue, 0u);
  for (int s = 0; s <= kSegments; ++s) {
    SCOPED_TRACE(segment_name(s));
    ASSERT_GT(r.seg[s].requests, 0u);
    EXPECT_EQ(r.seg[s].sampled_requests, r.seg[s].requests);
    EXPECT_EQ(r.seg[s].functions_sampled, r.seg[s].functions);
    EXPECT_GE(r.seg[s].functions, 6u);
    EXPECT_EQ(r.seg[s].rmse_bytes, 0.0);  // integer sizes: exact sums on both sides
    // Span durations and phase-1 sums convert the same ticks; only rounding differs.
    EXPECT_LT(r.seg[s].rmse_latency_ns, 1e-3 * r.seg[s].mean_latency_ns);
  }
}

TEST(Representativeness, NoneRecordsNothingButCountsEveryCall) {
  RunResult r = run_once(Mode::kNone, quick(), 1);
  EXPECT_GT(r.whole().requests, 0u);
  EXPECT_EQ(r.whole().sampled_requests, 0u);
  EXPECT_EQ(r.whole().spans, 0u);
  EXPECT_EQ(r.counters.spans_recorded, 0u);
  EXPECT_GE(r.whole().functions, 6u);  // phase 1 still saw every function
  EXPECT_EQ(r.whole().functions_sampled, 0u);
}

TEST(Representativeness, NomRunsTheUninstrumentedService) {
  RunResult r = run_once(Mode::kNom, quick(), 1);
  EXPECT_GT(r.whole().requests, 0u);
  EXPECT_EQ(r.whole().functions, 0u);  // no probes, so no engine data at all
  EXPECT_EQ(r.whole().rmse_bytes, -1.0);
  EXPECT_NE(r.checksum, 0u);  // the service really ran (its result is folded, not dropped)
}

TEST(Representativeness, SamplersStayWithinTheirRates) {
  for (Mode m : {Mode::kUniform, Mode::kAdaptive, Mode::kInverse}) {
    SCOPED_TRACE(mode_name(m));
    RunResult r = run_once(m, quick(), 2);
    ASSERT_GT(r.whole().requests, 400u);
    double share = r.sampled_share();
    EXPECT_LE(r.whole().mean_rate, 0.5);  // the desired rate bounds every sampler's rate
    if (m == Mode::kUniform) {
      EXPECT_DOUBLE_EQ(r.whole().mean_rate, 0.5);
      EXPECT_NEAR(share, 0.5, 0.1);  // > 4 binomial standard deviations at 400 requests
    } else {
      EXPECT_GE(r.whole().mean_rate, 0.01);  // minRate
      EXPECT_GT(share, 0.0);
      EXPECT_LT(share, 0.6);  // never above the desired rate (plus binomial noise)
    }
    EXPECT_GT(r.whole().rmse_bytes, 0.0);  // a sample, not the population
    EXPECT_GT(r.whole().functions_sampled, 0u);
  }
}

}  // namespace
}  // namespace repstudy
