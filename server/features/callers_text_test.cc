#include "server/features/callers_text.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace perfhat::features {
namespace {

using index::CallersReport;
using index::SiteAssumption;
using ::testing::HasSubstr;

CallersReport reportOf(CallersReport::Basis basis, double predicted_ns, double measured_ns) {
  CallersReport r;
  r.key = "work(int)";
  r.name = "work";
  r.basis = basis;
  r.predicted_ns = predicted_ns;
  r.measured_ns = measured_ns;
  r.change_known = basis != CallersReport::Basis::Unknown;
  r.change_ns = basis == CallersReport::Basis::PredictedMinusMeasured ? predicted_ns - measured_ns
                : basis == CallersReport::Basis::AllNew               ? predicted_ns
                                                                      : 0;
  return r;
}

TEST(FeaturesCallersText, EachBasisSaysHowTheChangeCameAbout) {
  using Basis = CallersReport::Basis;
  EXPECT_EQ(callersBasisText(reportOf(Basis::PredictedMinusMeasured, 30e6, 10e6)),
            "predicted 30 ms − measured 10 ms per call");
  EXPECT_EQ(callersBasisText(reportOf(Basis::AllNew, 20e6, 0)),
            "no production data: the whole prediction (20 ms per call) is new");
  EXPECT_EQ(callersBasisText(reportOf(Basis::MeasuredUnchanged, 0, 10e6)),
            "measured, no change predicted");
  EXPECT_EQ(callersBasisText(reportOf(Basis::Unknown, 0, 0)),
            "no production data and no prediction: the change is unknown");
}

TEST(FeaturesCallersText, AssumptionsNameTheLineAndTheWeight) {
  EXPECT_EQ(siteAssumptionText({SiteAssumption::Kind::LoopCountedOnce, 3}),
            "loop at line 4: iterations unknown, counted once");
  EXPECT_EQ(siteAssumptionText({SiteAssumption::Kind::BranchArm, 6, 0.5}),
            "branch at line 7: arm taken with probability 0.50 (equal arms)");
  SiteAssumption guarded{SiteAssumption::Kind::BranchArm, 9, 0.2};
  guarded.prior = analysis::BranchPrior{};
  guarded.prior->short_circuit = analysis::BranchPrior::ShortCircuit::And;
  EXPECT_THAT(siteAssumptionText(guarded),
              HasSubstr("branch at line 10: arm taken with probability 0.20 ("));
}

// Figures go through the one duration and count formatters: a change of seconds and a caller
// that runs the call thousands of times read as such, not in exponent notation.
TEST(FeaturesCallersText, TheTableShowsLargeFiguresInUnits) {
  CallersReport r = reportOf(CallersReport::Basis::PredictedMinusMeasured, 1.5e9, 0.5e9);
  EXPECT_THAT(callersMarkdown(r), HasSubstr("No caller in the workspace index."));
  index::CallerImpact c;
  c.name = "caller";
  c.file = "/src/b.cc";
  c.range.start.line = 1;
  c.executions = 2000;
  c.impact_ns = r.change_ns * c.executions;
  r.callers.push_back(c);
  const std::string md = callersMarkdown(r);
  EXPECT_THAT(md, HasSubstr("### Callers of `work`"));
  EXPECT_THAT(md, HasSubstr("Change per call: +1 s (predicted 1.5 s − measured 500 ms per call)"));
  EXPECT_THAT(md, HasSubstr("| `caller` | b.cc:2 | 2k | +33.3 min |"));
  r.basis = CallersReport::Basis::Unknown;
  r.change_known = false;
  EXPECT_THAT(callersMarkdown(r), HasSubstr("| `caller` | b.cc:2 | 2k | ? |"));
}

}  // namespace
}  // namespace perfhat::features
