#include "budget_classes.h"

#include <gtest/gtest.h>

namespace perfhat::budget {
namespace {

TEST(BudgetClasses, ParsesEverySelector) {
  auto r = ClassRules::parse(
      "db = ns:agile::Db::* ; http=kind:request; hot=group:most frequent@2;"
      "rest=*");
  ASSERT_TRUE(r.error.empty()) << r.error;
  ASSERT_EQ(r.rules.size(), 4u);
  EXPECT_EQ(r.rules[0].name, "db");
  EXPECT_EQ(r.rules[0].pattern, "agile::Db::*");
  EXPECT_EQ(r.rules[1].kind, ClassRule::Kind::kProbeKind);
  EXPECT_EQ(r.rules[2].kind, ClassRule::Kind::kGroup);
  EXPECT_DOUBLE_EQ(r.rules[2].weight, 2);
  EXPECT_EQ(r.rules[3].kind, ClassRule::Kind::kAll);
}

TEST(BudgetClasses, RefusalsNameTheRule) {
  EXPECT_EQ(ClassRules::parse("a=*;b=kind:thread").error,
            "rule 2 ('b'): kind: is function, scope or request, not 'thread'");
  EXPECT_EQ(ClassRules::parse("a=*;a=ns:x").error, "rule 2 ('a'): class named twice");
  EXPECT_EQ(ClassRules::parse("x").error, "rule 1 ('x'): expected name=selector");
  EXPECT_NE(ClassRules::parse("g=group:more").error.find("rule 1 ('g'): group: column"),
            std::string::npos);
  EXPECT_EQ(ClassRules::parse("a=*@-1").error,
            "rule 1 ('a'): weight '-1' is not a number in [0, 1e9]");
  EXPECT_EQ(ClassRules::parse("a=path:/x").error,
            "rule 1 ('a'): selector 'path:/x' is none of ns:GLOB, kind:KIND, group:TIGRIS, *");
  EXPECT_TRUE(ClassRules::parse(" ; ").rules.empty());
}

TEST(BudgetClasses, QualifiedNamesFromPrettyFunctions) {
  EXPECT_EQ(qualifiedName("void agile::Db::get(const std::string&) const"), "agile::Db::get");
  EXPECT_EQ(qualifiedName("std::vector<int> ns::f<std::pair<int, int> >(int)"),
            "ns::f<std::pair<int, int> >");
  EXPECT_EQ(qualifiedName("bool ns::Cmp::operator()(int) const"), "ns::Cmp::operator()");
  EXPECT_EQ(qualifiedName("main"), "main");
  EXPECT_EQ(namespaceOf("agile::Db::get"), "agile::Db");
  EXPECT_EQ(namespaceOf("ns::f<a::b>"), "ns");
  EXPECT_EQ(namespaceOf("main"), "(global)");
}

TEST(BudgetClasses, FirstMatchingRuleWins) {
  auto r = ClassRules::parse("db=ns:agile::Db::*;req=kind:request;hot=group:most frequent;all=*");
  std::vector<bool> groups = {false, false, true, false};
  EXPECT_EQ(matchRule(r, {"agile::Db::get", 0}, groups), 0);
  EXPECT_EQ(matchRule(r, {"agile::serve", 2}, groups), 1);
  EXPECT_EQ(matchRule(r, {"agile::x", 0}, groups), 2);
  EXPECT_EQ(matchRule(r, {"agile::x", 0}, {false, false, false, false}), 3);
  auto only = ClassRules::parse("db=ns:agile::Db::*");
  EXPECT_EQ(matchRule(only, {"other::f", 0}, {}), -1);
}

}  // namespace
}  // namespace perfhat::budget
