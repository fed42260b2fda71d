#include "common/result.h"

#include <gtest/gtest.h>

namespace perfhat {
namespace {

TEST(Result, UnsignedIsDigitsOnlyAndSaysWhatWasWrong) {
  EXPECT_EQ(parseUnsigned("0").value, 0u);
  EXPECT_EQ(parseUnsigned("18446744073709551615").value, 18446744073709551615ull);
  for (const char* bad : {"", "-1", "+1", " 1", "1 ", "1.5", "0x10", "18446744073709551616"}) {
    const Result<unsigned long long> r = parseUnsigned(bad);
    EXPECT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.error.find(std::string("'") + bad + "'"), std::string::npos) << r.error;
  }
}

TEST(Result, NonNegativeTakesEveryNumberFormButNoSignOrInfinity) {
  EXPECT_EQ(parseNonNegative("1e6").value, 1e6);
  EXPECT_EQ(parseNonNegative("0.5").value, 0.5);
  EXPECT_EQ(parseNonNegative("0").value, 0);
  for (const char* bad : {"", "-1", "inf", "nan", " 1", "1x", "abc"}) {
    EXPECT_FALSE(parseNonNegative(bad).ok()) << bad;
  }
  EXPECT_TRUE(static_cast<bool>(parseNonNegative("3")));
  EXPECT_FALSE(static_cast<bool>(Result<int>::failure("why")));
}

TEST(Result, VoidCarriesOnlyTheReason) {
  EXPECT_TRUE(Result<void>::success().ok());
  const Result<void> r = Result<void>::failure("cannot reparse a.cc: crashed");
  EXPECT_FALSE(static_cast<bool>(r));
  EXPECT_EQ(r.error, "cannot reparse a.cc: crashed");
}

}  // namespace
}  // namespace perfhat
