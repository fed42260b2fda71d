// Records every reliability test's outcome in the results file (suite.h), so that the table says
// which cases passed and which did not, next to their figures.
#include <gtest/gtest.h>

#include "tests/reliability/suite.h"

namespace perfhat::reliability {
namespace {

class OutcomeListener : public ::testing::EmptyTestEventListener {
  void OnTestEnd(const ::testing::TestInfo& info) override {
    const ::testing::TestResult* r = info.result();
    record({{"kind", "outcome"},
            {"test", std::string(info.test_suite_name()) + "." + info.name()},
            {"passed", r->Passed() && !r->Skipped()},
            {"skipped", r->Skipped()},
            {"seconds", static_cast<double>(r->elapsed_time()) / 1000.0}});
  }
};

// Installed before main() (the tests link gtest_main).
const bool kInstalled = [] {
  ::testing::UnitTest::GetInstance()->listeners().Append(new OutcomeListener);
  return true;
}();

}  // namespace
}  // namespace perfhat::reliability
