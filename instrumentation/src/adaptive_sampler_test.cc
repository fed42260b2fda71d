#include "adaptive_sampler.h"

#include <gtest/gtest.h>

#include <cmath>

namespace perfhat::sampling {
namespace {

PerfRecord rec(double rps, std::vector<double> rt, bool me) {
  static const char* kTypes[] = {"/home", "/vets", "/pets", "/owners"};
  PerfRecord r;
  r.rps = rps;
  r.monitoring = me;
  for (size_t i = 0; i < rt.size(); ++i) r.mean_rt[kTypes[i]] = rt[i];
  return r;
}

TEST(InstrAdaptiveSampler, Table51RejectsVets) {
  // Table 5.1 after the new /vets request entered the population (line 1 runs first).
  AdaptiveSampler s;
  s.set_counts({{"/home", 105}, {"/vets", 42}, {"/pets", 62}, {"/owners", 10}},
               {{"/home", 53}, {"/vets", 22}, {"/pets", 31}, {"/owners", 5}});
  Decision d = s.decide("/vets", /*u=*/0.0, 0);  // Bernoulli succeeds
  EXPECT_FALSE(d.sampled);
  // /owners is exactly balanced (4.5% vs 4.5%) and is accepted with weight 1/rate.
  d = s.decide("/owners", 0.0, 0);
  EXPECT_TRUE(d.sampled);
  EXPECT_DOUBLE_EQ(d.weight, 2.0);
  // Bernoulli failure: not sampled whatever the balance.
  EXPECT_FALSE(s.decide("/owners", 0.99, 0).sampled);
}

TEST(InstrAdaptiveSampler, Table52NormalBehaviourAndWorkedExample) {
  std::deque<PerfRecord> ref = {rec(500, {325, 450, 800, 1200}, true),
                                rec(1500, {400, 550, 900, 1500}, true),
                                rec(2500, {600, 780, 1050, 1100}, false),
                                rec(550, {350, 400, 650, 900}, true),
                                rec(325, {430, 420, 480, 700}, false),
                                rec(200, {270, 200, 235, 500}, true)};
  // Monitoring off: RpS {2500, 325}, even -> the higher -> record #3.
  const PerfRecord* normal = normal_behavior(ref, false);
  ASSERT_NE(normal, nullptr);
  EXPECT_EQ(normal->rps, 2500);
  // Equation 5.1-5.3: equal = true, |diff| = 0.0963 (faster than normal: diff > 0).
  Comparison c = compare(*normal, rec(0, {500, 720, 950, 1020}, false), 0.05);
  EXPECT_TRUE(c.equal);
  EXPECT_NEAR(std::fabs(c.diff), 0.0963, 5e-5);
  EXPECT_GT(c.diff, 0);
  EXPECT_EQ(c.pairs, 4u);
  // Monitoring on: RpS {500, 1500, 550, 200} -> middle pair 500/550 -> the higher, 550.
  EXPECT_EQ(normal_behavior(ref, true)->rps, 550);
}

TEST(InstrAdaptiveSampler, CochranFpcReferenceTable) {
  AdaptiveOptions o;
  struct Row {
    double t, conf, n0, n500, n1000;
  } rows[] = {{1, 99.45, 769.4, 303.3, 435.1},
              {10, 94.60, 371.1, 213.3, 270.9},
              {60, 71.65, 115.0, 93.7, 103.3},
              {180, 36.79, 22.9, 22.0, 22.4}};
  for (const auto& r : rows) {
    double conf = decaying_confidence(r.t, o.max_length_s);
    EXPECT_NEAR(conf * 100, r.conf, 0.01) << r.t;
    double n0 = stats::cochran_n0(stats::z_critical(conf), o.cochran_p, o.cochran_e);
    EXPECT_NEAR(n0, r.n0, 0.1) << r.t;
    EXPECT_NEAR(min_sample_size(r.t, 500, o), r.n500, 0.1) << r.t;
    EXPECT_NEAR(min_sample_size(r.t, 1000, o), r.n1000, 0.1) << r.t;
  }
  // t = 0: infinite z, the whole population is required.
  EXPECT_DOUBLE_EQ(min_sample_size(0, 500, o), 500);
}

TEST(InstrAdaptiveSampler, RateRisesWhenFasterAndBaselineWhenSlower) {
  AdaptiveOptions o;
  o.max_rate = 0.5;
  AdaptiveSampler s(o, 0);
  // Reference rows with monitoring on at a typical workload: ~1000 ns per type.
  for (int i = 0; i < 5; ++i) s.push_reference(rec(100, {1000, 2000, 3000, 4000}, true));
  s.set_max_rate(0.5);
  // Interval 1: statistically equal but 5% slower -> small decrease.
  const char* types[] = {"/home", "/vets", "/pets", "/owners"};
  double base[] = {1000, 2000, 3000, 4000};
  auto run_interval = [&](double t0, double factor) {
    for (int i = 0; i < 100; ++i) {
      const char* ty = types[i % 4];
      Decision d = s.decide(ty, 0.99, t0);
      s.on_response(ty, base[i % 4] * factor, d.sampled, t0);
    }
  };
  run_interval(0.5, 1.05);
  s.tick(1.0);
  EXPECT_LT(s.rate(), 0.5);
  EXPECT_GT(s.rate(), 0.45);
  double after_dip = s.rate();
  // Interval 2: 20% faster -> rate rises (capped at maxRate).
  run_interval(1.5, 0.8);
  s.tick(2.0);
  EXPECT_GT(s.rate(), after_dip);
  EXPECT_LE(s.rate(), 0.5);
  EXPECT_TRUE(s.monitoring_enabled(2.0));
  // Interval 3: each type 3x slower -> significantly worse -> monitoring off for 3 s.
  run_interval(2.5, 3.0);
  s.tick(3.0);
  EXPECT_FALSE(s.monitoring_enabled(3.5));
  EXPECT_FALSE(s.decide("/home", 0.0, 3.5).sampled);  // baseline: nothing sampled
  EXPECT_TRUE(s.monitoring_enabled(6.0));
}

TEST(InstrAdaptiveSampler, BaselineStillDegradedLowersRate) {
  AdaptiveSampler s({}, 0);
  for (int i = 0; i < 3; ++i) s.push_reference(rec(100, {1000, 2000, 3000, 4000}, false));
  for (int i = 0; i < 5; ++i) s.push_reference(rec(100, {1000, 2000, 3000, 4000}, true));
  const char* types[] = {"/home", "/vets", "/pets", "/owners"};
  double base[] = {1000, 2000, 3000, 4000};
  auto run_interval = [&](double t0, double factor) {
    for (int i = 0; i < 40; ++i) {
      Decision d = s.decide(types[i % 4], 0.99, t0);
      s.on_response(types[i % 4], base[i % 4] * factor, d.sampled, t0);
    }
  };
  run_interval(0.5, 3.0);
  s.tick(1.0);  // monitoring on + significantly slower -> baseline starts
  ASSERT_FALSE(s.monitoring_enabled(1.5));
  double r = s.rate();
  run_interval(1.5, 3.0);
  s.tick(2.0);  // baseline, still 3x slower than the no-monitoring normal -> lower the rate
  EXPECT_LT(s.rate(), r);
  EXPECT_GE(s.rate(), 0.01);
}

TEST(InstrAdaptiveSampler, SampleEvaluationReleasesRepresentativeSample) {
  AdaptiveOptions o;
  o.max_rate = 1.0;
  AdaptiveSampler s(o, 0);
  std::vector<CycleSummary> released;
  s.on_release([&](const CycleSummary& c) { released.push_back(c); });
  const char* types[] = {"/home", "/vets", "/pets", "/owners"};
  // Deterministic alternation: every request sampled (rate 1), balanced by construction.
  double t = 0;
  for (int i = 0; i < 4000 && released.empty(); ++i) {
    t = 10.0 + i * 0.001;
    const char* ty = types[i % 4];
    Decision d = s.decide(ty, 0.0, t);
    s.on_response(ty, 1000.0 + (i % 7), d.sampled, t);
  }
  ASSERT_EQ(released.size(), 1u);
  EXPECT_FALSE(released[0].forced);
  uint64_t n = 0;
  for (auto& [k, v] : released[0].sample) n += v;
  EXPECT_GT(static_cast<double>(n), released[0].min_size);
  EXPECT_EQ(s.cycles_released(), 1u);
}

TEST(InstrAdaptiveSampler, UnbalancedSampleIsHeldThenForceReleasedAtMaxLength) {
  AdaptiveSampler s({}, 0);
  std::vector<CycleSummary> released;
  s.on_release([&](const CycleSummary& c) { released.push_back(c); });
  s.set_counts({{"/home", 500}, {"/rare", 500}}, {{"/home", 400}});
  EXPECT_FALSE(s.evaluate(120));  // /rare missing from the sample: 50% vs 0%
  EXPECT_TRUE(released.empty());
  EXPECT_TRUE(s.evaluate(180));
  ASSERT_EQ(released.size(), 1u);
  EXPECT_TRUE(released[0].forced);
}

TEST(InstrSamplers, BaselinesBehave) {
  auto full = make_sampler("full", 0.5, 0);
  auto none = make_sampler("none", 0.5, 0);
  auto uni = make_sampler("uniform", 0.25, 0);
  EXPECT_TRUE(full->decide("x", 0.999, 0).sampled);
  EXPECT_FALSE(none->decide("x", 0.0, 0).sampled);
  EXPECT_TRUE(uni->decide("x", 0.2, 0).sampled);
  EXPECT_DOUBLE_EQ(uni->decide("x", 0.2, 0).weight, 4.0);
  EXPECT_FALSE(uni->decide("x", 0.3, 0).sampled);
  EXPECT_EQ(make_sampler("bogus", 0.5, 0), nullptr);
  auto inv = make_sampler("inverse", 0.5, 0);
  for (int i = 0; i < 100; ++i) inv->decide("x", 0.9, 0.5);
  inv->tick(1.0);  // reference throughput 100/s
  for (int i = 0; i < 400; ++i) inv->decide("x", 0.9, 1.5);
  inv->tick(2.0);  // 400/s -> median(100,400)=250 -> 0.5*250/400
  EXPECT_NEAR(inv->rate(), 0.5 * 250 / 400, 1e-9);
}

}  // namespace
}  // namespace perfhat::sampling
