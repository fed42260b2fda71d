// The real pipeline feeding the features: libclang parses a tiny TU, the analysis engine
// attaches production data and infers the rest, and the features render the snapshot.
#include <regex>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/test_units.h"
#include "server/analysis/analyze.h"
#include "server/analysis/testing/test_tu.h"
#include "server/features/annotate.h"
#include "server/features/features.h"

namespace perfhat::features {
namespace {

using analysis::InMemoryFeedback;
using analysis::testing::TestTU;
using ::testing::HasSubstr;

using perfhat::test_units::kMs;

FeedbackItem item(const std::string& key, double p50_ns, double p90_ns) {
  FeedbackItem it;
  it.key = key;
  Stats s;
  s.count = 600;
  s.mean_ns = p50_ns;
  s.p50_ns = p50_ns;
  s.p90_ns = p90_ns;
  s.p95_ns = p90_ns;
  s.p99_ns = 2 * p90_ns;
  s.rate_per_s = 10;
  it.stats = s;
  return it;
}

// T4 on real code: a getter measured elsewhere, newly called inside two constant loops.
constexpr const char* kT4 = R"src(struct Backlog { int hours(int task) const; };
int estimate(const Backlog& b) {
  int total = 0;
  for (int i = 0; i < 10; ++i) {
    for (int j = 0; j < 20; ++j) {
      total += b.hours(j);
    }
  }
  return total;
}
)src";

class FeaturesOnRealAnalysis : public ::testing::Test {
 protected:
  void SetUp() override {
    TestTU t;
    t.code = kT4;
    FeedbackItem getter = item("Backlog::hours(int) const", 2 * kMs, 3 * kMs);
    CallSiteStats elsewhere;
    elsewhere.caller = "report()";
    elsewhere.count = 100;
    elsewhere.mean_ns = 2 * kMs;
    elsewhere.p50_ns = 2 * kMs;
    elsewhere.caller_rate_per_s = 3;
    getter.callsites = {elsewhere};
    InMemoryFeedback view({item("estimate(const Backlog &)", 5 * kMs, 6 * kMs), getter});
    snapshot = t.analyze(view);
    ASSERT_NE(snapshot, nullptr);
  }
  analysis::SnapshotPtr snapshot;
};

TEST_F(FeaturesOnRealAnalysis, HintsShowTheNestedLoopProduct) {
  const std::vector<InlayHint> hints = inlayHints(*snapshot, {{0, 0}, {100, 0}}, Options());
  std::vector<std::string> on_line3, on_line5;
  for (const InlayHint& h : hints) {
    if (h.position.line == 3) on_line3.push_back(h.label);
    if (h.position.line == 5) on_line5.push_back(h.label);
  }
  EXPECT_THAT(on_line3, ::testing::ElementsAre("≈ 400 ms (10 × 40 ms)"));
  EXPECT_THAT(on_line5, ::testing::ElementsAre("~⏱ 2 ms"));
}

TEST_F(FeaturesOnRealAnalysis, RegressionWarningPointsAtTheGetter) {
  const std::vector<Diagnostic> d = diagnostics(*snapshot, Options());
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].code, "perfhat.regression");
  EXPECT_EQ(d[0].range.start.line, 5);
  // 5 ms measured; predicted 5 ms + 10 × 20 × 2 ms = 405 ms.
  EXPECT_THAT(d[0].message, HasSubstr("Predicted +400 ms per call of estimate()"));
  EXPECT_THAT(d[0].message, HasSubstr("(2 ms) × 10 × 20 iterations"));
}

TEST_F(FeaturesOnRealAnalysis, LensHoverAndAnnotatedSource) {
  const std::vector<CodeLens> lenses = codeLenses(*snapshot, Options());
  ASSERT_EQ(lenses.size(), 2u);
  EXPECT_EQ(lenses[0].title, "prod p50 5 ms · p99 12 ms · 600 calls/min");
  EXPECT_EQ(lenses[1].title, "predicted +400 ms (+8000 %)");
  const auto h = hover(*snapshot, {5, 16}, Options());  // on b.hours(j)
  ASSERT_TRUE(h);
  EXPECT_THAT(h->markdown, HasSubstr("model `callsite-regression`"));
  const std::string out = annotateSource(kT4, *snapshot, Options(), false);
  EXPECT_THAT(out, HasSubstr("for (int i = 0; i < 10; ++i) {   ≈ 400 ms (10 × 40 ms)\n"));
  EXPECT_THAT(out, HasSubstr("warning perfhat.regression: Predicted +400 ms"));
}

// A new call in an `if` without data on branch frequency: the analysis assumes both arms
// equally likely, and the diagnostic says so.
TEST(FeaturesOnRealAnalysisBranch, AssumedBranchProbabilityShowsInHintAndWarning) {
  TestTU t;
  t.code = R"src(int slow(int n);
int handle(bool cold) {
  int t = 0;
  if (cold) {
    t += slow(1);
  }
  return t;
}
)src";
  FeedbackItem callee = item("slow(int)", 10 * kMs, 10 * kMs);
  CallSiteStats elsewhere;
  elsewhere.caller = "other()";
  elsewhere.count = 50;
  elsewhere.mean_ns = 10 * kMs;
  elsewhere.p50_ns = 10 * kMs;
  elsewhere.caller_rate_per_s = 1;
  callee.callsites = {elsewhere};
  InMemoryFeedback view({item("handle(bool)", 1 * kMs, 1 * kMs), callee});
  analysis::SnapshotPtr s = t.analyze(view);
  ASSERT_NE(s, nullptr);
  std::vector<std::string> line3;
  for (const InlayHint& h : inlayHints(*s, {{3, 0}, {3, 100}}, Options())) line3.push_back(h.label);
  EXPECT_THAT(line3, ::testing::ElementsAre("~⏱ 5 ms (50 %)"));
  // The branch weight is assumed (a stated prior of 50 %): slow() at that weight does not fit
  // in handle()'s measured 1 ms, so the call is new and the warning names the assumption.
  const std::vector<Diagnostic> d = diagnostics(*s, Options());
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].range.start.line, 4);
  EXPECT_EQ(d[0].severity, Severity::Warning);
  EXPECT_EQ(d[0].code, "perfhat.regression");
  EXPECT_THAT(d[0].message, HasSubstr("Predicted +5 ms per call of handle(): slow() (10 ms) × 50 % "
                                      "branch = 5 ms"));
  const auto h = hover(*s, {3, 3}, Options());  // on `if`
  ASSERT_TRUE(h);
  EXPECT_THAT(h->markdown, HasSubstr("Taken with probability 50 %"));
  EXPECT_THAT(h->markdown, HasSubstr("equally likely"));
}

// "12.4 ms", "1.24 s", "850 µs", "120 ns" → nanoseconds (the features' own format).
double parseDuration(const std::string& text) {
  std::istringstream in(text);
  double v = 0;
  std::string unit;
  in >> v >> unit;
  if (unit == "s") return v * 1e9;
  if (unit == "ms") return v * 1e6;
  if (unit == "µs") return v * 1e3;
  return v;
}

// The "name (value) × f1 × f2 … = total" chain of an added cost, parsed back.
struct Chain {
  double value = 0;
  std::vector<double> factors;
  double total = 0;
  std::string text;
};
Chain parseChain(const std::string& text) {
  static const std::regex kChain(
      R"re(\w+\(\) \(([0-9.]+ (?:ns|µs|ms|s))\)((?: × [0-9.]+[kM]?(?: \((?:[^()]|\(\))*\))?(?: iterations)?(?: % branch)?)+) = ([0-9.]+ (?:ns|µs|ms|s)))re");
  std::smatch m;
  Chain c;
  if (!std::regex_search(text, m, kChain)) return c;
  c.text = m.str(0);
  c.value = parseDuration(m[1].str());
  c.total = parseDuration(m[3].str());
  static const std::regex kFactor(R"re( × ([0-9.]+)([kM]?)( % branch)?)re");
  const std::string factors = m[2].str();
  for (auto it = std::sregex_iterator(factors.begin(), factors.end(), kFactor);
       it != std::sregex_iterator(); ++it) {
    double f = std::stod((*it)[1].str());
    if ((*it)[2] == "k") f *= 1e3;
    if ((*it)[2] == "M") f *= 1e6;
    if ((*it)[3].matched) f /= 100;
    c.factors.push_back(f);
  }
  return c;
}

// The warning's figure, the factors it lists and the ones the function's hover lists are one
// derivation: the product of the factors is the figure. (A loop whose count was taken from a
// sibling's production call count once printed the loop's iterations instead: +3.43 ms warned,
// factors multiplying to 6.88 ms.)
TEST(FeaturesOnRealAnalysisArithmetic, WarningAndHoverShowTheSameFactorsAndProduct) {
  TestTU t;
  t.code = R"src(struct List { int* begin() const; int* end() const; };
struct Svc {
  List items(int) const;
  int name(int) const;
  int cost(int) const;
};
constexpr int kPasses = 4;
int page(const Svc& s) {
  int t = 0;
  for (int x : s.items(1)) {
    t += s.name(x);
    for (int p = 0; p < kPasses; ++p) {
      t += s.cost(x);
    }
  }
  return t;
}
)src";
  FeedbackItem items = item("Svc::items(int) const", 1 * kMs, 2 * kMs);
  items.result_size = SizeStats{30, 40, 50, 10};  // over every caller
  items.callsites = {{"page(const Svc &)", 600, 1 * kMs, 1 * kMs, 2 * kMs, 3 * kMs, 10}};
  FeedbackItem name = item("Svc::name(int) const", 0.1 * kMs, 0.2 * kMs);
  name.callsites = {{"page(const Svc &)", 600, 0.1 * kMs, 0.1 * kMs, 0.2 * kMs, 0.3 * kMs, 10}};
  name.callsites[0].calls_per_parent = 12;  // this page's lists hold 12 on average
  FeedbackItem cost = item("Svc::cost(int) const", 2 * kMs, 3 * kMs);
  cost.callsites = {{"other()", 600, 2 * kMs, 2 * kMs, 3 * kMs, 4 * kMs, 10}};
  InMemoryFeedback view({item("page(const Svc &)", 3 * kMs, 4 * kMs), items, name, cost});
  analysis::SnapshotPtr s = t.analyze(view);
  ASSERT_NE(s, nullptr);

  const std::vector<Diagnostic> d = diagnostics(*s, Options());
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].severity, Severity::Warning);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(d[0].message, m,
                                std::regex(R"re(Predicted \+([0-9.]+ (?:ns|µs|ms|s)) per call)re")))
      << d[0].message;
  const double warned = parseDuration(m[1].str());
  const Chain chain = parseChain(d[0].message);
  ASSERT_FALSE(chain.text.empty()) << d[0].message;
  double product = chain.value;
  for (double f : chain.factors) product *= f;
  // 2 ms × 4 (kPasses) × 12 (name()'s production count in the same block) = 96 ms.
  EXPECT_THAT(chain.factors, ::testing::ElementsAre(4, 12)) << d[0].message;
  EXPECT_NEAR(product, chain.total, 0.01 * chain.total) << d[0].message;
  EXPECT_NEAR(warned, chain.total, 0.01 * chain.total) << d[0].message;
  EXPECT_NEAR(warned, 96 * kMs, 0.01 * 96 * kMs);

  // The function's hover lists the same chain, and the predicted total is measured + it.
  const auto h = hover(*s, {7, 5}, Options());  // on `page`
  ASSERT_TRUE(h);
  EXPECT_THAT(h->markdown, HasSubstr("- " + chain.text)) << h->markdown;
  EXPECT_THAT(h->markdown, HasSubstr("**~⏱ p50 99 ms** per call")) << h->markdown;
  // The loop's hover names the constant its count came from.
  const auto loop = hover(*s, {11, 5}, Options());
  ASSERT_TRUE(loop);
  EXPECT_THAT(loop->markdown, HasSubstr("Iterations: **4** (constant trip count: `kPasses = 4`)"));
}

// Without a deployed revision a call without call-site data is new only when the function's
// measured time leaves no room for it (DESIGN §10); otherwise "possibly new", information only.
TEST(FeaturesOnRealAnalysisArithmetic, CallThatFitsInTheMeasuredTimeIsOnlyPossiblyNew) {
  TestTU t;
  t.code = R"src(int lookup(int);
bool more(int);
int run(int n) {
  int t = lookup(n);
  while (more(t)) {
    t += lookup(t);
  }
  return t;
}
)src";
  FeedbackItem lookup = item("lookup(int)", 4 * kMs, 5 * kMs);
  lookup.callsites = {{"other()", 600, 4 * kMs, 4 * kMs, 5 * kMs, 6 * kMs, 10}};
  // run() measured 50 ms: a 4 ms lookup() before the loop fits; so do the loop's calls, whose
  // count (10, the default) is an assumption.
  InMemoryFeedback roomy({item("run(int)", 50 * kMs, 60 * kMs), lookup});
  analysis::SnapshotPtr s = t.analyze(roomy);
  ASSERT_NE(s, nullptr);
  std::vector<Diagnostic> d = diagnostics(*s, Options());
  ASSERT_EQ(d.size(), 1u);  // the loop's 40 ms would warn if new; the 4 ms call is below +10 ms
  EXPECT_EQ(d[0].severity, Severity::Information);
  EXPECT_EQ(d[0].code, "perfhat.possibly-new");
  EXPECT_THAT(d[0].message, HasSubstr("lookup() (4 ms) × 10 (assumed) iterations = 40 ms"));
  EXPECT_EQ(codeLenses(*s, Options()).size(), 1u);  // no predicted delta: nothing counted

  // run() measured 1 ms: the call before the loop (4 ms, data only) cannot be in it.
  InMemoryFeedback tight({item("run(int)", 1 * kMs, 2 * kMs), lookup});
  s = t.analyze(tight);
  d = diagnostics(*s, Options());
  ASSERT_FALSE(d.empty());
  EXPECT_EQ(d[0].severity, Severity::Warning);
  EXPECT_EQ(d[0].code, "perfhat.regression");
  EXPECT_EQ(d[0].range.start.line, 3);
  EXPECT_THAT(d[0].message, HasSubstr("Predicted +4 ms per call of run(): lookup() (4 ms) = 4 ms"));
}

// With no production data at all, nothing reads "0 ns": accessors have no figure, sums with
// parts without data say "+ ?".
TEST(FeaturesOnRealAnalysisUnknown, NoDataNeverShowsZero) {
  TestTU t;
  t.code = R"src(struct P {
  int x_ = 0;
  int x() const { return x_; }
  int twice() const { return x() + x(); }
};
int ext(int);
int mystery(int);
int work(const P& p) {
  int t = p.twice();
  for (int i = 0; i < 3; ++i) t += p.x();
  return t + ext(t);
}
int mix(int a) { return ext(a) + mystery(a); }
)src";
  InMemoryFeedback none;
  analysis::SnapshotPtr s = t.analyze(none);
  ASSERT_NE(s, nullptr);
  for (const InlayHint& h : inlayHints(*s, {{0, 0}, {100, 0}}, Options()))
    EXPECT_EQ(h.label.find("0 ns"), std::string::npos) << h.label;
  for (const CodeLens& l : codeLenses(*s, Options()))
    EXPECT_EQ(l.title.find("0 ns"), std::string::npos) << l.title;
  const std::string out = annotateSource(t.code, *s, Options(), false);
  EXPECT_EQ(out.find("0 ns"), std::string::npos) << out;

  // A known part beside an unknown one: "+ ?".
  FeedbackItem ext = item("ext(int)", 2 * kMs, 3 * kMs);
  ext.callsites = {{"other()", 600, 2 * kMs, 2 * kMs, 3 * kMs, 4 * kMs, 10}};
  s = t.analyze(InMemoryFeedback({ext}));
  std::vector<std::string> line7;
  for (const InlayHint& h : inlayHints(*s, {{7, 0}, {7, 100}}, Options())) line7.push_back(h.label);
  EXPECT_THAT(line7, ::testing::ElementsAre("~⏱ 2 ms")) << "work() = ext() + negligible parts";
  std::vector<std::string> line12;
  for (const InlayHint& h : inlayHints(*s, {{12, 0}, {12, 100}}, Options()))
    line12.push_back(h.label);
  // mix() = ext() + mystery(), which nothing is known about: a lower bound, and it says so.
  EXPECT_THAT(line12, ::testing::Contains("~⏱ 2 ms + ?"));
  const auto h = hover(*s, {12, 5}, Options());
  ASSERT_TRUE(h);
  EXPECT_THAT(h->markdown, HasSubstr("**~⏱ p50 2 ms + ?** per call — predicted; at least this: 1 "
                                     "part(s) without data are not counted"));
}

}  // namespace
}  // namespace perfhat::features
