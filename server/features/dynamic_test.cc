#include "server/features/dynamic.h"

#include <gtest/gtest.h>

#include "server/features/dynamic_text.h"

namespace perfhat::features {
namespace {

constexpr int64_t kDay = 86400;

analysis::FunctionInfo function(std::string key, int line) {
  analysis::FunctionInfo f;
  f.key = std::move(key);
  f.name_range = {{line, 4}, {line, 8}};
  f.range = {{line, 0}, {line + 3, 1}};
  return f;
}

DynamicMetrics metrics(std::string key, double visits) {
  DynamicMetrics m;
  m.key = std::move(key);
  m.window_from_s = 1'000'000;
  m.window_to_s = m.window_from_s + kDay;
  m.covered_from_s = m.window_from_s + 60;
  m.covered_to_s = m.window_to_s;
  m.visits = visits;
  return m;
}

struct Fixture {
  Snapshot s;
  DynamicView v;
  Fixture() {
    s.functions = {function("shop::load()", 1), function("shop::put()", 10),
                   function("shop::unprobed()", 20)};
    DynamicMetrics load = metrics("shop::load()", 28'800);
    load.calls_per_hour = 1'200;
    load.self_p50_ns = 40'000;
    load.demand_rank = 3;
    load.callers = {{"shop::get()", 20'000}, {"shop::list()", 8'800}};
    load.callees = {{"db::query()", 28'800}};
    load.fan_in = 7;
    load.fan_out = 1;
    v.by_key[load.key] = load;
    DynamicMetrics put = metrics("shop::put()", 0);
    put.never_called = true;
    v.by_key[put.key] = put;
    v.definitions["shop::get()"] = {"/src/api.cc", 41};
  }
};

TEST(DynamicFeatures, LensPerCalledFunctionWithTheIssuesFigures) {
  Fixture f;
  const auto lenses = dynamicLenses(f.s, f.v);
  ASSERT_EQ(lenses.size(), 1u);  // put() was not called, unprobed() has no metrics
  EXPECT_EQ(lenses[0].key, "shop::load()");
  EXPECT_EQ(lenses[0].range, f.s.functions[0].name_range);
  EXPECT_EQ(dynamicLensTitle(lenses[0]),
            "1.2k calls/h · self p50 40 µs · demand #3 · "
            "7 callers / 1 callee");
  const CodeLens l = toCodeLens(lenses[0]);
  EXPECT_EQ(l.command, "perfhat.showCallGraph");
  EXPECT_EQ(l.arguments, std::vector<std::string>{"shop::load()"});
}

TEST(DynamicFeatures, LensLeavesOutWhatIsUnknown) {
  DynamicLens l;
  l.fan_in = 1;
  l.stale = true;
  EXPECT_EQ(dynamicLensTitle(l), "calls/h ? · 1 caller / 0 callees · cached");
  l.calls_per_hour = 1.2e6;
  EXPECT_EQ(dynamicLensTitle(l).substr(0, 12), "1.2M calls/h");
}

TEST(DynamicFeatures, MatchedKeysFindMetricsStoredUnderAnotherSpelling) {
  Fixture f;
  f.s.functions[2].matched = {{"shop::load()", std::nullopt}};
  EXPECT_EQ(dynamicFor(f.s.functions[2], f.v), &f.v.by_key["shop::load()"]);
  EXPECT_EQ(dynamicKeys(f.s.functions[2]),
            (std::vector<std::string>{"shop::unprobed()", "shop::load()"}));
}

TEST(DynamicFeatures, HoverOnTheNameListsCallersWithLinksWhereDefined) {
  Fixture f;
  EXPECT_FALSE(dynamicHover(f.s, {2, 0}, f.v));  // inside the body, not on the name
  const auto h = dynamicHover(f.s, {1, 5}, f.v, 1);
  ASSERT_TRUE(h);
  ASSERT_EQ(h->callers.size(), 1u);  // top 1 of 2 listed
  EXPECT_EQ(h->callers[0].key, "shop::get()");
  ASSERT_TRUE(h->callers[0].definition);
  EXPECT_EQ(h->callers[0].definition->line, 41);
  EXPECT_EQ(h->fan_in, 7u);
  const std::string md = dynamicHoverText(
      *h,
      [](const DefinitionLocation& d) {
        return "file://" + d.file + "#L" + std::to_string(d.line + 1);
      },
      true);
  EXPECT_NE(md.find("**Callers** (1 of 7)"), std::string::npos) << md;
  EXPECT_NE(md.find("- [`shop::get()`](file:///src/api.cc#L42) — 20k calls"), std::string::npos)
      << md;
  EXPECT_NE(md.find("- `db::query()` — 28.8k calls"), std::string::npos) << md;  // no definition
  EXPECT_NE(md.find("last 1 d"), std::string::npos) << md;
  const std::string plain = dynamicHoverText(*h, nullptr, false);
  EXPECT_EQ(plain.find("**"), std::string::npos) << plain;
  EXPECT_NE(plain.find("  shop::get() — 20k calls"), std::string::npos) << plain;
}

TEST(DynamicFeatures, NeverCalledOnlyWhereProbedAndTheDataCoversTheWindow) {
  Fixture f;
  auto n = neverCalled(f.s, f.v);
  ASSERT_EQ(n.size(), 1u);
  EXPECT_EQ(n[0].key, "shop::put()");
  const Diagnostic d = toDiagnostic(n[0]);
  EXPECT_EQ(d.severity, Severity::Information);
  EXPECT_EQ(d.code, "perfhat.never-called");
  EXPECT_NE(d.message.find("last 1 d"), std::string::npos);

  // The service started reporting half-way through the window: no verdict.
  f.v.by_key["shop::put()"].covered_from_s = f.v.by_key["shop::put()"].window_from_s + kDay / 2;
  EXPECT_TRUE(neverCalled(f.s, f.v).empty());
  // No data at all in the window.
  f.v.by_key["shop::put()"].covered_from_s.reset();
  EXPECT_TRUE(neverCalled(f.s, f.v).empty());
}

TEST(DynamicFeatures, WindowWords) {
  EXPECT_EQ(formatWindow(86400), "1 d");
  EXPECT_EQ(formatWindow(7200), "2 h");
  EXPECT_EQ(formatWindow(5400), "1.5 h");
  EXPECT_EQ(formatWindow(1800), "30 min");
}

}  // namespace
}  // namespace perfhat::features
