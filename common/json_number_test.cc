#include "common/json_number.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

namespace perfhat {
namespace {

using nlohmann::json;

TEST(JsonNumber, IntegersInRangeAndWholeFloatsAreRead) {
  EXPECT_EQ(integerFrom<int>(json(42)), 42);
  EXPECT_EQ(integerFrom<int>(json(-7)), -7);
  EXPECT_EQ(integerFrom<int>(json(3.0)), 3);
  EXPECT_EQ(integerFrom<uint64_t>(json(std::numeric_limits<uint64_t>::max())),
            std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(integerFrom<int64_t>(json(-9.223372036854775808e18)),
            std::numeric_limits<int64_t>::min());
  EXPECT_EQ(integerFrom<int>(json::parse("2147483647")), 2147483647);
}

TEST(JsonNumber, OutOfRangeFractionalAndNonNumbersThrowTypeError) {
  // 1e99 was a cast with undefined behaviour in nlohmann's get<int>() (found by fuzzing).
  for (const char* text : {"1e99", "-1e99", "2.5", "2147483648", "-2147483649", "9.3e18", "\"3\"",
                           "null", "true", "[1]"}) {
    EXPECT_THROW(integerFrom<int>(json::parse(text)), json::type_error) << text;
  }
  EXPECT_THROW(integerFrom<uint32_t>(json(-1)), json::type_error);
  EXPECT_THROW(integerFrom<uint64_t>(json(-0.5)), json::type_error);
  EXPECT_THROW(integerFrom<int64_t>(json(9.223372036854775808e18)), json::type_error);
  EXPECT_THROW(integerFrom<uint64_t>(json::parse("1.8446744073709552e19")), json::type_error);
  EXPECT_THROW(integerFrom<int>(json(std::numeric_limits<double>::quiet_NaN())), json::type_error);
}

TEST(JsonNumber, IntegerOrFallsBackOnAbsentOrNullOnly) {
  const json j = json::parse(R"({"a": 5, "n": null, "big": 1e300})");
  EXPECT_EQ(integerOr(j, "a", 0), 5);
  EXPECT_EQ(integerOr(j, "n", 9), 9);
  EXPECT_EQ(integerOr(j, "missing", -1), -1);
  EXPECT_THROW(integerOr(j, "big", 0), json::type_error);
  EXPECT_EQ(valueFrom<std::string>(json("s")), "s");
  EXPECT_EQ(valueFrom<int16_t>(json(12)), 12);
}

}  // namespace
}  // namespace perfhat
