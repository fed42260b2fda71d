#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "server/features/annotate.h"
#include "server/features/test_snapshot.h"

namespace perfhat::features {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using namespace testing;  // NOLINT: fixture helpers

// What `perfhat-lsp --check` prints for the T4 change: lens above the function, hints after
// each line, the regression warning under the new getter.
constexpr std::string_view kT4Golden = R"(#include "agile/backlog.h"

▸ prod p50 410 ms · p99 900 ms · 1.2k calls/min  │  predicted +3.72 s (+907 %)
int BacklogService::listStories(const Backlog& backlog) {   ~⏱ 4.13 s (prod 410 ms)
  int total = 0;
  for (const Story& s : backlog.stories()) {   stories() ⏱ 3 ms  ≈ 3.87 s (100 × 38.7 ms)
    total += storyPoints(s);   ⏱ 1.5 ms
    for (int pass = 0; pass < 3; ++pass) {   ≈ 37.2 ms (3 × 12.4 ms)
      total += s.getTasks().size();   ~⏱ 12.4 ms
               ^~~~~~~~~~~~ warning perfhat.regression: Predicted +3.72 s per call of listStories(): getTasks() (12.4 ms) × 100 × 3 iterations = 3.72 s — p50 4.13 s vs 410 ms in production (warns above +82 ms)
    }
  }
  return total;
}
)";

TEST(FeaturesAnnotate, GoldenT4) {
  const T4 t;
  EXPECT_EQ(annotateSource(std::string(kT4Source), t.snapshot, Options(), false), kT4Golden);
}

TEST(FeaturesAnnotate, DesignProfileDropsSmallFigures) {
  const T4 t;
  Options o;
  o.profile = Profile::Design;
  const std::string out = annotateSource(std::string(kT4Source), t.snapshot, o, false);
  EXPECT_THAT(out, HasSubstr("backlog.stories()) {   ≈ 3.87 s (100 × 38.7 ms)\n"));
  EXPECT_THAT(out, HasSubstr("    total += storyPoints(s);\n"));  // 1.5 ms: no hint
}

TEST(FeaturesAnnotate, ColorMarksKinds) {
  const T4 t;
  const std::string out = annotateSource(std::string(kT4Source), t.snapshot, Options(), true);
  EXPECT_THAT(out, HasSubstr("\x1b[33m~⏱ 12.4 ms\x1b[0m"));       // predicted: yellow
  EXPECT_THAT(out, HasSubstr("\x1b[36m⏱ 1.5 ms\x1b[0m"));         // measured: cyan
  EXPECT_THAT(out, HasSubstr("\x1b[1;33m^~~~~~~~~~~~ warning"));  // warning: bold yellow
  EXPECT_THAT(annotateSource(std::string(kT4Source), t.snapshot, Options(), false),
              Not(HasSubstr("\x1b[")));
}

TEST(FeaturesAnnotate, CaretsFollowTabsAndProblemsPastTheEndStayVisible) {
  const std::string text = "void f() {\n\tg(\"é\", h());\n}";  // no final newline
  FunctionBuilder b("f", "f()", {{0, 0}, {2, 1}}, find(text, 0, "f"), {0, 8});
  b.call(0, "h", find(text, 1, "h()"), unknown());
  Snapshot s;
  s.functions.push_back(b.build());
  s.problems.push_back({find(text, 1, "h()"), "use of undeclared identifier 'h'", true});
  s.problems.push_back({{{40, 0}, {40, 1}}, "unterminated comment", false});
  const std::string out = annotateSource(text, s, Options(), false);
  EXPECT_EQ(out,
            "▸ perfhat: no production data\n"
            "void f() {   ⏱ ?\n"
            "\tg(\"é\", h());   ⏱ ?\n"
            "\t       ^~~ error perfhat.parse: use of undeclared identifier 'h'\n"
            "}\n"
            "^ warning perfhat.parse: unterminated comment\n");
}

TEST(FeaturesAnnotate, EmptySnapshotEchoesTheSource) {
  EXPECT_EQ(annotateSource("int x;\r\nint y;\n", Snapshot(), Options(), false), "int x;\nint y;\n");
  EXPECT_EQ(annotateSource("", Snapshot(), Options(), false), "");
}

}  // namespace
}  // namespace perfhat::features
