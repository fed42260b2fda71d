#include "feedback-handler/dynamic/call_graph.h"

#include <gtest/gtest.h>

#include <cmath>

namespace perfhat::handler::dynamic {
namespace {

DDSketch calls(double n, double each_ns) {
  DDSketch s;
  s.add(each_ns, n);
  return s;
}

// main → a ×10 (each 100 µs incl.), main → b ×5, a → c ×20 (each 2 µs), b → c ×5, c → c ×3
// (recursion), d known but never called. main runs once, 2 ms.
CallGraph sample() {
  CallGraph g;
  g.addRow(AggKind::kFunction, "main", "", calls(1, 2e6));
  g.addRow(AggKind::kFunction, "a", "", calls(10, 1e5));
  g.addRow(AggKind::kFunction, "b", "", calls(5, 5e4));
  g.addRow(AggKind::kFunction, "c", "", calls(28, 2e3));
  g.addRow(AggKind::kCallSite, "a", "main", calls(10, 1e5));
  g.addRow(AggKind::kCallSite, "b", "main", calls(5, 5e4));
  g.addRow(AggKind::kCallSite, "c", "a", calls(20, 2e3));
  g.addRow(AggKind::kCallSite, "c", "b", calls(5, 2e3));
  g.addRow(AggKind::kCallSite, "c", "c", calls(3, 2e3));
  g.addRow(AggKind::kLoop, "a", "0", calls(7, 3));  // ignored
  for (const char* k : {"main", "a", "b", "c", "d"}) g.addKnown(k);
  return g;
}

TEST(CallGraph, VisitCountsFanInFanOutWithEdgeCounts) {
  const GraphMetrics m = derive(sample());
  const FunctionMetrics& c = m.functions.at("c");
  EXPECT_EQ(c.visits, 28);
  ASSERT_EQ(c.callers.size(), 3u);  // recursion counts (seed 001: FI_next_state ∋ next_state)
  EXPECT_EQ(c.callers[0].key, "a");
  EXPECT_EQ(c.callers[0].count, 20);
  EXPECT_EQ(c.callers[1].key, "b");
  EXPECT_EQ(c.callers[2].key, "c");
  EXPECT_EQ(c.callers[2].count, 3);
  ASSERT_EQ(c.callees.size(), 1u);
  const FunctionMetrics& main = m.functions.at("main");
  EXPECT_TRUE(main.callers.empty());
  ASSERT_EQ(main.callees.size(), 2u);
  EXPECT_EQ(main.callees[0].key, "a");
  EXPECT_EQ(main.callees[0].count, 10);
  EXPECT_EQ(m.edges, 5u);
}

TEST(CallGraph, NeverCalledAndLeafFunctions) {
  const GraphMetrics m = derive(sample());
  EXPECT_EQ(m.never_called, std::vector<std::string>{"d"});
  EXPECT_TRUE(m.functions.at("d").never_called);
  EXPECT_EQ(m.functions.at("d").demand_rank, 0u);
  // c calls itself, so it is not a leaf; nothing else is a leaf in the sample.
  EXPECT_TRUE(m.leaves.empty());
  CallGraph g;
  g.addRow(AggKind::kFunction, "f", "", calls(4, 10));
  g.addRow(AggKind::kFunction, "g", "", calls(4, 3));
  g.addRow(AggKind::kCallSite, "g", "f", calls(4, 3));
  const GraphMetrics m2 = derive(g);
  EXPECT_EQ(m2.leaves, std::vector<std::string>{"g"});
  EXPECT_EQ(m2.functions.at("g").self_p50_ns, m2.functions.at("g").inclusive_p50_ns);
}

TEST(CallGraph, SelfTimeIsInclusiveMinusDirectChildren) {
  const GraphMetrics m = derive(sample());
  // main: 2 ms − (10 × 100 µs + 5 × 50 µs) = 750 µs per call.
  EXPECT_DOUBLE_EQ(m.functions.at("main").self_mean_ns, 750e3);
  // a: 100 µs − 2 × 2 µs = 96 µs; c: (28 × 2 µs − 3 × 2 µs) / 28.
  EXPECT_DOUBLE_EQ(m.functions.at("a").self_mean_ns, 96e3);
  EXPECT_DOUBLE_EQ(m.functions.at("c").self_mean_ns, 25 * 2e3 / 28);
  EXPECT_NEAR(m.functions.at("main").inclusive_p50_ns, 2e6, 2e6 * 0.01);
  EXPECT_FALSE(m.functions.at("main").self_p50_ns.has_value());  // no self-time rows
}

TEST(CallGraph, DemandIsVisitsTimesMeanSelfTimeRanked) {
  const GraphMetrics m = derive(sample());
  // a: 10 × 96 µs = 960 µs; main: 750 µs; b: 5 × 48 µs = 240 µs; c: 50 µs.
  EXPECT_DOUBLE_EQ(m.functions.at("a").demand_ns, 960e3);
  EXPECT_EQ(m.functions.at("a").demand_rank, 1u);
  EXPECT_EQ(m.functions.at("main").demand_rank, 2u);
  EXPECT_EQ(m.functions.at("b").demand_rank, 3u);
  EXPECT_EQ(m.functions.at("c").demand_rank, 4u);
}

TEST(CallGraph, SelfTimeSketchGivesTheMedian) {
  CallGraph g = sample();
  DDSketch self;
  for (int i = 0; i < 10; ++i) self.add(96e3 + i * 100);
  g.addRow(AggKind::kSelfTime, "a", "", self);
  const GraphMetrics m = derive(g);
  ASSERT_TRUE(m.functions.at("a").self_p50_ns.has_value());
  EXPECT_NEAR(*m.functions.at("a").self_p50_ns, 96.4e3, 96.4e3 * 0.01);
}

TEST(CallGraph, MergeOfTwoHalvesEqualsTheWhole) {
  // Replicas or windows: each half of every row in another graph; merged, the same metrics.
  CallGraph one, two;
  one.addRow(AggKind::kFunction, "a", "", calls(6, 1e5));
  two.addRow(AggKind::kFunction, "a", "", calls(4, 1e5));
  one.addRow(AggKind::kCallSite, "c", "a", calls(11, 2e3));
  two.addRow(AggKind::kCallSite, "c", "a", calls(9, 2e3));
  one.addRow(AggKind::kFunction, "c", "", calls(20, 2e3));
  two.addKnown("d");
  CallGraph whole;
  whole.addRow(AggKind::kFunction, "a", "", calls(10, 1e5));
  whole.addRow(AggKind::kCallSite, "c", "a", calls(20, 2e3));
  whole.addRow(AggKind::kFunction, "c", "", calls(20, 2e3));
  whole.addKnown("d");
  one.merge(two);
  const GraphMetrics a = derive(one), b = derive(whole);
  ASSERT_EQ(a.functions.size(), b.functions.size());
  for (const auto& [k, f] : b.functions) {
    const FunctionMetrics& g = a.functions.at(k);
    EXPECT_EQ(g.visits, f.visits) << k;
    EXPECT_EQ(g.self_mean_ns, f.self_mean_ns) << k;
    EXPECT_EQ(g.inclusive_p50_ns, f.inclusive_p50_ns) << k;
    EXPECT_EQ(g.demand_rank, f.demand_rank) << k;
    ASSERT_EQ(g.callers.size(), f.callers.size()) << k;
    for (size_t i = 0; i < f.callers.size(); ++i) EXPECT_EQ(g.callers[i].count, f.callers[i].count);
  }
  EXPECT_EQ(a.never_called, b.never_called);
}

TEST(CallGraph, SkewOfAParetoLikeServiceAndNoneForAFewFunctions) {
  EXPECT_FALSE(derive(sample()).skew.has_value());  // 4 called functions
  CallGraph g;
  for (int i = 1; i <= 400; ++i) {
    // Visit counts ∝ rank^(−1/α) with α = 1.5: a Zipf-like law whose tail index is α.
    g.addRow(AggKind::kFunction, "f" + std::to_string(i), "",
             calls(std::floor(1e6 * std::pow(i, -1 / 1.5)), 10));
  }
  const GraphMetrics m = derive(g);
  ASSERT_TRUE(m.skew.has_value());
  EXPECT_NEAR(m.skew->alpha, 1.5, 0.15);
}

}  // namespace
}  // namespace perfhat::handler::dynamic
