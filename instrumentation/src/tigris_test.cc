#include "tigris.h"

#include <gtest/gtest.h>

#include <random>

namespace perfhat::tigris {
namespace {

// Table 4.1 (Mertz 2021): frequency = invocation count, expensiveness = mean execution time,
// changeability = computation pattern (std-dev of return size; higher = less changeable).
std::vector<EventMetrics> table_4_1() {
  auto ev = [](std::string n, double f, double e, double c) {
    EventMetrics m;
    m.name = std::move(n);
    m.metrics[std::string(metric::kInvocationFrequency)] = f;
    m.metrics[std::string(metric::kExecutionTime)] = e;
    m.metrics[std::string(metric::kComputationPattern)] = c;
    return m;
  };
  return {ev("ClinicService.findOwner(args)", 12, 180, 6),
          ev("ClinicService.updateOwner(args)", 2, 500, 0),
          ev("VisitController.newVisit(args)", 50, 250, 12),
          ev("ClinicService.findVets()", 200, 300, 200),
          ev("OwnerRepository.findAll()", 100, 200, 90)};
}

std::vector<std::string> selected(const ClassifyResult& r, const std::vector<EventMetrics>& ev) {
  std::vector<std::string> out;
  for (size_t i = 0; i < ev.size(); ++i) {
    if (r.relevant[i]) out.push_back(ev[i].name);
  }
  return out;
}

TEST(InstrTigris, RunningExampleSelectsOnlyFindVets) {
  auto ev = table_4_1();
  auto f = parse("(more frequent ∪ most expensive) ∩ least changeable");
  ASSERT_TRUE(f);
  auto r = classify(*f.root, ev, Bindings::defaults());
  ASSERT_TRUE(r.error.empty()) << r.error;
  EXPECT_EQ(selected(r, ev), std::vector<std::string>{"ClinicService.findVets()"});
  // The thesis: normality rejected for every column, so quantile groups were used.
  for (const auto& [metric, g] : r.groupings) {
    EXPECT_EQ(g.method, GroupingMethod::kQuantiles) << metric;
  }
}

TEST(InstrTigris, RunningExampleDisjointGroupsSelectNothing) {
  auto ev = table_4_1();
  auto f = parse("(more frequent ∪ most expensive) ∩ least changeable");
  GroupingOptions opt;
  opt.cumulative = false;
  auto r = classify(*f.root, ev, Bindings::defaults(), opt);
  EXPECT_TRUE(selected(r, ev).empty());
}

TEST(InstrTigris, QuantileGroupsReproduceTable41Labels) {
  // Frequency column: 12 less, 2 least, 50 frequent, 200 most, 100 more.
  auto g = group_values({12, 2, 50, 200, 100}, {});
  EXPECT_EQ(g.group, (std::vector<int>{1, 0, 2, 4, 3}));
  // Changeability with inverted polarity: 6 more, 0 most, 12 changeable, 200 least, 90 less.
  g = group_values({-6, -0.0, -12, -200, -90}, {});
  EXPECT_EQ(g.group, (std::vector<int>{3, 4, 2, 0, 1}));
}

TEST(InstrTigris, SigmaBandsForNormalData) {
  std::mt19937_64 rng(3);
  std::normal_distribution<double> nd(100, 10);
  std::vector<double> v;
  v.reserve(502);  // 500 draws and the two outliers below
  for (int i = 0; i < 500; ++i) v.push_back(nd(rng));
  v.push_back(100 + 25);  // index 500: beyond +2 sigma
  v.push_back(100 - 15);  // index 501: between -2 and -1 sigma
  auto g = group_values(v, {});
  ASSERT_EQ(g.method, GroupingMethod::kSigmaBands);
  EXPECT_EQ(g.group[500], 4);
  EXPECT_EQ(g.group[501], 1);
  EXPECT_TRUE(g.selects(500, Modifier::kMore, true));
  EXPECT_FALSE(g.selects(500, Modifier::kMore, false));
  int most = 0;
  for (int x : g.group) most += x == 4;
  EXPECT_GT(most, 2);
  EXPECT_LT(most, 30);  // ~2.3% of 500 beyond +2 sigma
  GroupingOptions wide;
  wide.k_inner = 3;
  wide.k_outer = 4;
  EXPECT_EQ(group_values(v, wide).group[501], 2);
}

TEST(InstrTigris, DegenerateMetricIsAllAverage) {
  auto g = group_values({5, 5, 5, 5}, {});
  EXPECT_EQ(g.method, GroupingMethod::kDegenerate);
  EXPECT_FALSE(g.selects(0, Modifier::kMore, true));
  EXPECT_TRUE(g.selects(0, Modifier::kNone, true));
}

TEST(InstrTigris, UnboundCriterionIsAnError) {
  auto ev = table_4_1();
  auto f = parse("more frequent ∩ most maintainable");
  auto r = classify(*f.root, ev, Bindings::defaults());
  EXPECT_NE(r.error.find("'maintainable'"), std::string::npos);
  Bindings b = Bindings::defaults();
  b.set(Criterion::kMaintainable, {"CountLineCode", true});
  ev[3].metrics["CountLineCode"] = 400;  // findVets is the biggest
  ev[0].metrics["CountLineCode"] = 10;
  r = classify(*f.root, ev, b);
  EXPECT_TRUE(r.error.empty());
  EXPECT_EQ(selected(r, ev), std::vector<std::string>{"ClinicService.findVets()"});
}

TEST(InstrTigris, RestrictedFilterIsSubsetOfExpanded) {
  // Table 4.6: "The Restricted Filter leads to a subset of methods selected by the Expanded".
  auto restricted = parse(
      "less changeable ∩ more frequent ∩ (more usage-pattern ∪ (more expensive ∩ less "
      "usage-pattern))");
  auto expanded = parse(
      "(less changeable ∪ changeable) ∩ (more frequent ∪ frequent) ∩ ((more usage-pattern ∪ "
      "usage-pattern) ∪ (more expensive ∪ expensive))");
  ASSERT_TRUE(restricted && expanded);
  std::mt19937_64 rng(11);
  std::lognormal_distribution<double> ln(3, 1.5);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<EventMetrics> ev(60);
    for (size_t i = 0; i < ev.size(); ++i) {
      ev[i].name = "f" + std::to_string(i);
      for (auto m : {metric::kInvocationFrequency, metric::kExecutionTime,
                     metric::kComputationPattern, metric::kUserBehavior}) {
        ev[i].metrics[std::string(m)] = ln(rng);
      }
    }
    auto r = classify(*restricted.root, ev, Bindings::defaults());
    auto e = classify(*expanded.root, ev, Bindings::defaults());
    for (size_t i = 0; i < ev.size(); ++i) {
      if (r.relevant[i]) {
        EXPECT_TRUE(e.relevant[i]) << ev[i].name;
      }
    }
  }
}

TEST(InstrTigris, ScopePatterns) {
  auto s = Scope::parse("agile::*, -agile::detail::*");
  EXPECT_TRUE(s.admits("agile::BacklogService::storyPoints"));
  EXPECT_FALSE(s.admits("agile::detail::helper"));
  EXPECT_FALSE(s.admits("std::vector::push_back"));
  EXPECT_TRUE(Scope{}.admits("anything"));
  EXPECT_TRUE(glob_match("a?c*", "abcdef"));
  EXPECT_FALSE(glob_match("a?c", "ac"));
}

TEST(InstrTigris, StaticMetricsCsv) {
  auto sm = parse_static_metrics_csv(
      "Name,CountLineCode,Cyclomatic\n\"ns::f(int, int)\",120,7\nns::g,abc,3\r\n\n");
  EXPECT_TRUE(sm.error.empty()) << sm.error;
  EXPECT_DOUBLE_EQ(sm.by_name.at("ns::f(int, int)").at("CountLineCode"), 120);
  EXPECT_EQ(sm.by_name.at("ns::g").count("CountLineCode"), 0u);
  EXPECT_DOUBLE_EQ(sm.by_name.at("ns::g").at("Cyclomatic"), 3);
  auto bad = parse_static_metrics_csv("Name,A\nx,1\ny,1,2\n");
  EXPECT_EQ(bad.error, "line 3: expected 2 fields, found 3");
  EXPECT_EQ(bad.by_name.size(), 1u);
  EXPECT_FALSE(parse_static_metrics_csv("").error.empty());
  EXPECT_FALSE(parse_static_metrics_csv("Name,A\n\"x,1\n").error.empty());
}

}  // namespace
}  // namespace perfhat::tigris
