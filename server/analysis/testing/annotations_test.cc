#include "server/analysis/testing/annotations.h"

#include <gtest/gtest.h>

namespace perfhat::analysis::testing {
namespace {

TEST(AnnotationsTest, PointsAndRanges) {
  Annotations a("int $f^f() {\n  return [[g()]] + $x[[h(1)]];^\n}\n");
  EXPECT_EQ(a.code(), "int f() {\n  return g() + h(1);\n}\n");
  EXPECT_EQ(a.point("f"), (Position{0, 4}));
  EXPECT_EQ(a.point(), (Position{1, 20}));
  EXPECT_EQ(a.range(), (Range{{1, 9}, {1, 12}}));
  EXPECT_EQ(a.range("x"), (Range{{1, 15}, {1, 19}}));
  EXPECT_THROW(a.point("missing"), std::out_of_range);
  EXPECT_THROW(Annotations("[[open"), std::invalid_argument);
}

}  // namespace
}  // namespace perfhat::analysis::testing
