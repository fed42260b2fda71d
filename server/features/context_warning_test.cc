// The warning on a new call of a callee whose cost depends on the caller's context: real libclang
// parses of the code as written and as production ran it, the analysis, then diagnostics().
#include <limits>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/test_units.h"
#include "server/analysis/analyze.h"
#include "server/analysis/testing/test_tu.h"
#include "server/features/features.h"

namespace perfhat::features {
namespace {

using analysis::InMemoryFeedback;
using analysis::testing::TestTU;
using ::testing::HasSubstr;

using perfhat::test_units::kMs;

const char* kHeader = R"src(
#include <vector>
struct Story {
  const std::vector<int>& tasks() const;  // lazily loaded: a query the first time only
  int points() const;
};
)src";
const char* kDeployed = R"src(
#include "repo.h"
int taskCount(const Story& s) { return static_cast<int>(s.tasks().size()); }
int report(const Story& s) { return s.points(); }
)src";
const char* kWithHelper = R"src(
#include "repo.h"
int taskCount(const Story& s) { return static_cast<int>(s.tasks().size()); }
int report(const Story& s) { return s.points() + taskCount(s); }
)src";

FeedbackItem measured(const std::string& key, double p50_ns, double p90_ns) {
  FeedbackItem it;
  it.key = key;
  Stats s;
  s.count = 1000;
  s.mean_ns = s.p50_ns = p50_ns;
  s.p90_ns = p90_ns;
  s.p99_ns = 1.2 * p90_ns;
  it.stats = s;
  return it;
}

CallSiteStats siteOf(const std::string& caller, double mean_ns) {
  CallSiteStats c;
  c.caller = caller;
  c.count = 1000;
  c.mean_ns = c.p50_ns = mean_ns;
  c.calls_per_parent = 1;
  return c;
}

// tasks() p50 10 µs, p90 `tasks_p90`; the helper ran only where the tasks were loaded already.
std::vector<Diagnostic> diagnose(double tasks_p90) {
  FeedbackItem tasks = measured("Story::tasks() const", 0.01 * kMs, tasks_p90);
  tasks.callsites = {siteOf("taskCount(const Story &)", 0.01 * kMs)};
  FeedbackItem helper = measured("taskCount(const Story &)", 0.02 * kMs, 0.03 * kMs);
  helper.callsites = {siteOf("summary()", 0.02 * kMs)};
  FeedbackItem points = measured("Story::points() const", 1 * kMs, 1.2 * kMs);
  points.callsites = {siteOf("report(const Story &)", 1 * kMs)};
  FeedbackItem report = measured("report(const Story &)", 2 * kMs, 2.4 * kMs);
  InMemoryFeedback view({tasks, helper, points, report});
  TestTU was, is;
  was.code = kDeployed;
  is.code = kWithHelper;
  was.headers = is.headers = {{"repo.h", kHeader}};
  auto deployed = was.build();
  auto now = is.build();
  analysis::SnapshotPtr s = analysis::analyze(now->unit, view, is.options, 0,
                                              analysis::DeployedUnit{&deployed->unit, "abc1234"});
  return diagnostics(*s, Options());
}

TEST(ContextWarning, SlowOutcomeOfALazilyLoadedInnerCallAboveTheThresholdWarns) {
  const std::vector<Diagnostic> d = diagnose(4 * kMs);
  int warnings = 0;
  for (const Diagnostic& x : d) {
    if (x.code != "perfhat.regression") continue;
    ++warnings;
    EXPECT_EQ(x.severity, Severity::Warning);
    EXPECT_THAT(x.message, HasSubstr("Context-dependent"));
    EXPECT_THAT(x.message, HasSubstr("tasks()"));
    EXPECT_THAT(x.message, HasSubstr("up to +4.01 ms"));
  }
  EXPECT_EQ(warnings, 1);
}

TEST(ContextWarning, OneOutcomeOnlyNeverWarns) {
  for (const Diagnostic& x : diagnose(0.02 * kMs)) EXPECT_NE(x.code, "perfhat.regression");
}

TEST(ContextWarning, RangeOpenAboveIsPrintedWithAQuestionMark) {
  EXPECT_EQ(formatDurationRange(1.5 * kMs, std::numeric_limits<double>::infinity()), "1.5 ms–?");
  EXPECT_EQ(formatDurationRange(1.5 * kMs, 2 * kMs), "1.5–2 ms");
}

}  // namespace
}  // namespace perfhat::features
