// The one grammar of `// perfhat: iterations=N` (annotation.h), line by line.
#include "server/analysis/annotation.h"

#include <gtest/gtest.h>

namespace perfhat::analysis {
namespace {

std::optional<double> value(std::string_view line) {
  const auto a = parseIterationsAnnotation(line);
  return a ? std::optional<double>(a->iterations) : std::nullopt;
}

TEST(IterationsAnnotationTest, CanonicalSpellingReadsBack) {
  EXPECT_EQ(iterationsAnnotationText(50), "// perfhat: iterations=50");
  const auto a = parseIterationsAnnotation("  " + iterationsAnnotationText(50));
  ASSERT_TRUE(a);
  EXPECT_EQ(a->iterations, 50);
  EXPECT_TRUE(a->alone);
}

TEST(IterationsAnnotationTest, SpacingIsFree) {
  EXPECT_EQ(value("//perfhat:iterations=7"), 7);
  EXPECT_EQ(value("//   perfhat:   iterations   =   7   "), 7);
  EXPECT_EQ(value("\t// perfhat:\titerations\t=\t7\r"), 7);
  EXPECT_EQ(value("// TODO(ana) perfhat: iterations=7"), 7);  // other words before the tag
}

TEST(IterationsAnnotationTest, Numbers) {
  EXPECT_EQ(value("// perfhat: iterations=0"), 0);
  EXPECT_EQ(value("// perfhat: iterations=2.5"), 2.5);
  EXPECT_EQ(value("// perfhat: iterations=1e3"), 1000);
  EXPECT_EQ(value("// perfhat: iterations=4E2"), 400);
  EXPECT_EQ(value("// perfhat: iterations=007"), 7);
}

TEST(IterationsAnnotationTest, InvalidNumbersAreNoAnnotation) {
  EXPECT_FALSE(value("// perfhat: iterations="));
  EXPECT_FALSE(value("// perfhat: iterations=   "));
  EXPECT_FALSE(value("// perfhat: iterations=abc"));
  EXPECT_FALSE(value("// perfhat: iterations=-5"));
  EXPECT_FALSE(value("// perfhat: iterations=+5"));
  EXPECT_FALSE(value("// perfhat: iterations=.5"));
  EXPECT_FALSE(value("// perfhat: iterations=1e999"));  // not a finite double
  EXPECT_FALSE(value("// perfhat: iterations=N"));
}

TEST(IterationsAnnotationTest, TrailingTextIsIgnored) {
  EXPECT_EQ(value("// perfhat: iterations=20 rows per page"), 20);
  EXPECT_EQ(value("// perfhat: iterations=20rows"), 20);
  EXPECT_EQ(value("// perfhat: iterations=5.x"), 5);  // "." without digits is trailing text
  EXPECT_EQ(value("// perfhat: iterations=5e"), 5);
  EXPECT_EQ(value("// perfhat: iterations=3 // perfhat: iterations=9"), 3);  // the first wins
}

TEST(IterationsAnnotationTest, TheTagAndWordAreExact) {
  EXPECT_FALSE(value("perfhat: iterations=5"));  // not in a comment
  EXPECT_FALSE(value("/* perfhat: iterations=5 */"));
  EXPECT_FALSE(value("// perfhat iterations=5"));
  EXPECT_FALSE(value("// Perfhat: iterations=5"));
  EXPECT_FALSE(value("// perfhat: iteration=5"));
  EXPECT_FALSE(value("// perfhat: iterations 5"));
  EXPECT_FALSE(value("// perfhat: loops=5"));
  EXPECT_FALSE(value("perfhat: iterations=5 //"));                 // the tag must follow the `//`
  EXPECT_EQ(value("// perfhat: note, perfhat: iterations=4"), 4);  // a later tag may match
}

TEST(IterationsAnnotationTest, AloneOnlyWhenNothingButBlanksPrecedeTheComment) {
  EXPECT_TRUE(parseIterationsAnnotation(" \t // perfhat: iterations=5")->alone);
  EXPECT_FALSE(parseIterationsAnnotation("for (;;) {  // perfhat: iterations=5")->alone);
  EXPECT_FALSE(parseIterationsAnnotation("x = 1; // perfhat: iterations=5")->alone);
}

}  // namespace
}  // namespace perfhat::analysis
