#include "tigris_dsl.h"

#include <gtest/gtest.h>

namespace perfhat::tigris {
namespace {

std::string canon(std::string_view s) {
  auto r = parse(s);
  if (!r) return "ERROR " + r.error->to_string();
  return print(*r.root);
}

TEST(InstrTigrisDsl, ParsesThesisExamples) {
  EXPECT_EQ(canon("least frequent"), "least frequent");
  EXPECT_EQ(canon("more frequent U most expensive"), "(more frequent ∪ most expensive)");
  EXPECT_EQ(canon("most changeable ∩ (most concurrent ∪ more error-prone)"),
            "(most changeable ∩ (most concurrent ∪ more error-prone))");
  EXPECT_EQ(canon("less changeable ∩ more frequent ∩ (more usage-pattern ∪ (more expensive ∩ "
                  "less usage-pattern))"),
            "((less changeable ∩ more frequent) ∩ (more usage-pattern ∪ (more expensive ∩ less "
            "usage-pattern)))");
  EXPECT_EQ(canon("(least changeable ∪ most changeable) ∩ more frequent ∩ (most usage-pattern \\ "
                  "less expensive)"),
            "(((least changeable ∪ most changeable) ∩ more frequent) ∩ (most usage-pattern \\ less "
            "expensive))");
  EXPECT_EQ(canon("(more frequent ∪ most expensive) ∩ least changeable"),
            "((more frequent ∪ most expensive) ∩ least changeable)");
}

TEST(InstrTigrisDsl, AsciiAliasesAndSpellings) {
  EXPECT_EQ(canon("more frequent union most expensive"), canon("more frequent ∪ most expensive"));
  EXPECT_EQ(canon("frequent ^ expensive"), "(frequent ∩ expensive)");
  EXPECT_EQ(canon("frequent intersect expensive"), "(frequent ∩ expensive)");
  EXPECT_EQ(canon("frequent - expensive"), "(frequent \\ expensive)");
  EXPECT_EQ(canon("frequent minus expensive"), "(frequent \\ expensive)");
  EXPECT_EQ(canon("more usagepattern"), "more usage-pattern");
  EXPECT_EQ(canon("MORE Frequent"), "more frequent");
  // A hyphen between two criteria with no spaces is the minus operator.
  EXPECT_EQ(canon("expensive-latent"), "(expensive \\ latent)");
  EXPECT_EQ(canon("error-prone-latent"), "(error-prone \\ latent)");
}

TEST(InstrTigrisDsl, EqualPrecedenceLeftAssociative) {
  EXPECT_EQ(canon("frequent ∪ expensive ∩ latent"), "((frequent ∪ expensive) ∩ latent)");
  EXPECT_EQ(canon("frequent \\ expensive ∪ latent"), "((frequent \\ expensive) ∪ latent)");
}

TEST(InstrTigrisDsl, RoundTripsThroughPrint) {
  auto a = parse("(least changeable ∪ most changeable) ∩ more frequent - latent");
  ASSERT_TRUE(a);
  auto b = parse(print(*a.root));
  ASSERT_TRUE(b);
  EXPECT_EQ(print(*a.root), print(*b.root));
}

TEST(InstrTigrisDsl, ErrorsCarryPositions) {
  auto r = parse("more frequent ∪ most");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error->column, 21u);  // end of input, counted in characters (∪ is one)
  EXPECT_NE(r.error->message.find("expected a criterion after 'most'"), std::string::npos);

  r = parse("more frequnt");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error->column, 6u);
  EXPECT_NE(r.error->message.find("'frequnt'"), std::string::npos);

  r = parse("(frequent ∪ expensive");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error->message.find("expected ')' to close '(' at column 1"), std::string::npos);

  r = parse("frequent expensive");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error->column, 10u);
  EXPECT_NE(r.error->message.find("expected an operator"), std::string::npos);

  r = parse("frequent )");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error->column, 10u);

  r = parse("frequent ∪ $");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error->column, 12u);
  EXPECT_NE(r.error->to_string().find("column 12: unexpected character '$'"), std::string::npos);

  EXPECT_FALSE(parse(""));
  EXPECT_FALSE(parse("   "));
  EXPECT_FALSE(parse("∪ frequent"));
}

TEST(InstrTigrisDsl, DeepNestingIsAnErrorNotACrash) {
  std::string deep(5000, '(');
  deep += "frequent";
  deep += std::string(5000, ')');
  auto r = parse(deep);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error->message.find("too deeply"), std::string::npos);
}

TEST(InstrTigrisDsl, CriteriaUsed) {
  auto r = parse("(more frequent ∪ most expensive) ∩ least changeable");
  ASSERT_TRUE(r);
  EXPECT_EQ(criteria_used(*r.root), (1u << int(Criterion::kFrequent)) |
                                        (1u << int(Criterion::kExpensive)) |
                                        (1u << int(Criterion::kChangeable)));
}

}  // namespace
}  // namespace perfhat::tigris
