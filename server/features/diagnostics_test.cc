#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "server/features/features.h"
#include "server/features/test_snapshot.h"

namespace perfhat::features {
namespace {

using ::testing::HasSubstr;
using namespace testing;  // NOLINT: fixture helpers

std::vector<Diagnostic> ofCode(const std::vector<Diagnostic>& all, const std::string& code) {
  std::vector<Diagnostic> out;
  for (const Diagnostic& d : all) {
    if (d.code == code) out.push_back(d);
  }
  return out;
}

TEST(FeaturesDiagnostics, T4RegressionAnchoredAtTheNewGetter) {
  const T4 t;
  const std::vector<Diagnostic> d =
      ofCode(diagnostics(t.snapshot, Options()), "perfhat.regression");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].severity, Severity::Warning);
  EXPECT_EQ(d[0].range, t.tasks_range);
  // 410 ms measured + 100 × 3 × 12.4 ms new = 4.13 s predicted.
  EXPECT_THAT(d[0].message, HasSubstr("Predicted +3.72 s per call of listStories(): "
                                      "getTasks() (12.4 ms) × 100 × 3 iterations = 3.72 s"));
  EXPECT_THAT(d[0].message, HasSubstr("p50 4.13 s vs 410 ms in production"));
  // 20 % of 410 ms; the noise allowance 2 × 1.2533 × (90 ms / 1.2816) / √1200 ≈ 5 ms is below.
  EXPECT_THAT(d[0].message, HasSubstr("warns above +82 ms"));
}

// A function measured at 100 ms (p90 given) whose prediction is `predicted`.
Snapshot changedFunction(double predicted, double p90 = 100e6, uint64_t calls = 500) {
  const std::string_view src = "void f() {\n  g();\n}\n";
  FunctionBuilder b("f", "f()", {{0, 0}, {2, 1}}, find(src, 0, "f"), {0, 8});
  b.changed().total(
      inferred(predicted, analysis::Model::Sum, analysis::fact::PartsSum{1, predicted}),
      stats(calls, 100e6, p90, 2 * p90));
  const int g = b.call(0, "g", find(src, 1, "g()"),
                       inferred(predicted - 100e6, analysis::Model::CalleeOverall,
                                analysis::fact::CalleeOverall{predicted - 100e6, {"g", ""}, 10}));
  b.added(g, {});
  Snapshot s;
  s.functions.push_back(b.build());
  return s;
}

TEST(FeaturesDiagnostics, NeedsBothRelativeAndAbsoluteThresholds) {
  Options o;
  o.learn_thresholds = false;
  EXPECT_EQ(diagnostics(changedFunction(125e6), o).size(), 1u);  // +25 % and +25 ms
  EXPECT_TRUE(diagnostics(changedFunction(115e6), o).empty());   // +15 % < 20 %
  o.regression_absolute_ns = 30e6;
  EXPECT_TRUE(diagnostics(changedFunction(125e6), o).empty());  // +25 ms < 30 ms
  o.regression_absolute_ns = 1e6;
  o.regression_relative = 0.3;
  EXPECT_TRUE(diagnostics(changedFunction(125e6), o).empty());
}

TEST(FeaturesDiagnostics, LearnedThresholdIsTheStandardErrorOfTheBaseline) {
  Options o;
  // p90 = 2 × p50: single calls vary by 100 %, but over 500 calls the p50 is known to
  // ±2 SE = 2 × 1.2533 × (100 ms / 1.2816) / √500 ≈ 8.7 ms, so +50 % is no noise.
  EXPECT_EQ(diagnostics(changedFunction(150e6, 200e6, 500), o).size(), 1u);
  // Seen 5 times, the same p50 is known to ±87 ms only: +50 % is within it, +100 % is not.
  EXPECT_TRUE(diagnostics(changedFunction(150e6, 200e6, 5), o).empty());
  EXPECT_EQ(diagnostics(changedFunction(200e6, 200e6, 5), o).size(), 1u);
  // Learning off: the bare thresholds.
  o.learn_thresholds = false;
  EXPECT_EQ(diagnostics(changedFunction(150e6, 200e6, 5), o).size(), 1u);
  // The mean's standard error has no √(π/2) factor: 2 × 78 ms / √5 ≈ 70 ms. +80 ms on the
  // p50 is within its ±87 ms, +88 ms on the mean (110 → 198 ms) is not...
  o.learn_thresholds = true;
  EXPECT_TRUE(diagnostics(changedFunction(180e6, 200e6, 5), o).empty());
  o.main_statistic = "mean";
  EXPECT_EQ(diagnostics(changedFunction(180e6, 200e6, 5), o).size(), 1u);
  o.main_statistic = "p50";
  // ...and the allowance is capped: +1000 % still warns on the noisiest function.
  EXPECT_EQ(diagnostics(changedFunction(1100e6, 5000e6, 2), o).size(), 1u);
  // The relative and absolute minimums stay: a steady function's +15 % is quiet.
  EXPECT_TRUE(diagnostics(changedFunction(115e6, 105e6, 500), o).empty());
}

TEST(FeaturesDiagnostics, UnchangedOrUnmeasuredFunctionsNeverWarn) {
  T4 t;
  t.snapshot.functions[0].changed = false;
  EXPECT_TRUE(diagnostics(t.snapshot, Options()).empty());
  T4 u;
  u.snapshot.functions[0].nodes[0].measured.reset();
  EXPECT_TRUE(diagnostics(u.snapshot, Options()).empty());
}

TEST(FeaturesDiagnostics, EveryLargeNewCallGetsItsOwnWarning) {
  T4 t;
  // A second new call in the outer loop: 100 × 5 ms = 500 ms per call, above the threshold too.
  FunctionInfo& f = t.snapshot.functions[0];
  analysis::Node extra;
  extra.id = static_cast<int>(f.nodes.size());
  extra.kind = NodeKind::Call;
  extra.parent = t.outer;
  extra.call.name = "audit";
  extra.range = find(kT4Source, 5, "storyPoints");
  extra.hint = extra.range.end;
  extra.estimate =
      inferred(5e6, analysis::Model::CallsiteRegression, analysis::fact::Regression{5e6, 1, "f"});
  f.nodes[t.outer].children.push_back(extra.id);
  f.nodes.push_back(extra);
  analysis::AddedCost audit;
  audit.node = extra.id;
  audit.per_execution = extra.estimate.dist;
  audit.factors = {{analysis::CostFactor::Kind::Iterations, 100, t.outer, false}};
  audit.executions = 100;
  audit.total = {550e6, 500e6, 750e6, 1500e6, 0};
  f.added.push_back(audit);
  const std::vector<Diagnostic> d = diagnostics(t.snapshot, Options());
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].range, t.tasks_range);  // 3.72 s: the biggest first
  EXPECT_THAT(d[1].message, HasSubstr("Adds ~500 ms per call of listStories(): audit() (5 ms) "
                                      "× 100 iterations"));
}

TEST(FeaturesDiagnostics, ParseProblems) {
  Snapshot s;
  s.problems.push_back({{{3, 4}, {3, 9}}, "expected ';' after expression", true});
  s.problems.push_back({{{7, 0}, {7, 1}}, "no compile_commands.json: using fallback flags", false});
  const std::vector<Diagnostic> d = diagnostics(s, Options());
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].severity, Severity::Error);
  EXPECT_EQ(d[0].code, "perfhat.parse");
  EXPECT_EQ(d[0].message, "expected ';' after expression");
  EXPECT_EQ(d[1].severity, Severity::Warning);
}

// The walk states where it stopped as numbers and names; the diagnostic says it.
TEST(FeaturesDiagnostics, TruncatedAnalysisIsAWarningThatSaysWhere) {
  Snapshot s;
  analysis::ParseProblem p;
  p.range = {{12, 6}, {12, 7}};
  p.error = false;
  p.truncated = analysis::ParseProblem::Truncated{100, "dispatch"};
  s.problems.push_back(p);
  const std::vector<Diagnostic> d = diagnostics(s, Options());
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].severity, Severity::Warning);
  EXPECT_EQ(d[0].range, p.range);
  EXPECT_EQ(d[0].message,
            "analysis truncated at nesting depth 100 in dispatch: code nested deeper has no hints "
            "and its cost is unknown");
}

// Problems that do not stand in the document's own text say where they came from.
TEST(FeaturesDiagnostics, AProblemOutsideTheDocumentSaysWhereItCameFrom) {
  using Origin = analysis::ParseProblem::Origin;
  Snapshot s;
  auto add = [&s](Origin origin, std::string message) {
    analysis::ParseProblem p;
    p.range = {{0, 0}, {0, 1}};
    p.message = std::move(message);
    p.origin = origin;
    s.problems.push_back(std::move(p));
  };
  add(Origin::IncludedFile, "unknown type name 'Widget'");
  s.problems.back().file = "/src/include/widget.h";
  s.problems.back().line = 12;
  add(Origin::CommandLine, "unknown argument: '-fbogus'");
  add(Origin::Parse, "AST read error");
  add(Origin::Analysis, "std::bad_alloc");
  const std::vector<Diagnostic> d = diagnostics(s, Options());
  ASSERT_EQ(d.size(), 4u);
  EXPECT_EQ(d[0].message, "/src/include/widget.h:12: unknown type name 'Widget'");
  EXPECT_EQ(d[1].message, "(command line) unknown argument: '-fbogus'");
  EXPECT_EQ(d[2].message, "libclang could not parse the file: AST read error");
  EXPECT_EQ(d[3].message, "perfhat: analysis failed: std::bad_alloc");
}

TEST(FeaturesDiagnostics, HotspotsAreOptionalAndPointAtTheInnermostCause) {
  T4 t;
  t.snapshot.functions[0].changed = false;  // only hotspots here
  Options o;
  EXPECT_TRUE(diagnostics(t.snapshot, o).empty());
  o.hotspot_diagnostics = true;
  const std::vector<Diagnostic> d = diagnostics(t.snapshot, o);
  // Outer loop 94 %, inner loop 90 %, getTasks 90 %: only the getter is reported.
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].severity, Severity::Information);
  EXPECT_EQ(d[0].code, "perfhat.hotspot");
  EXPECT_EQ(d[0].range, t.tasks_range);
  EXPECT_THAT(d[0].message,
              HasSubstr("getTasks() takes 90.1 % of listStories() (3.72 s of 4.13 s"));
}

}  // namespace
}  // namespace perfhat::features
