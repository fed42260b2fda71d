#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "server/features/features.h"

namespace perfhat::features {
namespace {

TEST(FeaturesFormat, DurationUnitsAndSignificantDigits) {
  EXPECT_EQ(formatDuration(850), "850 ns");
  EXPECT_EQ(formatDuration(12.4e6), "12.4 ms");
  EXPECT_EQ(formatDuration(3.1e6), "3.1 ms");
  EXPECT_EQ(formatDuration(12e6), "12 ms");
  EXPECT_EQ(formatDuration(1.24e9), "1.24 s");
  EXPECT_EQ(formatDuration(1234.5), "1.23 µs");
  EXPECT_EQ(formatDuration(123456789), "123 ms");
  EXPECT_EQ(formatDuration(90e9), "1.5 min");
}

TEST(FeaturesFormat, DurationEdgeCases) {
  EXPECT_EQ(formatDuration(0), "0 ns");
  EXPECT_EQ(formatDuration(0.5), "0.5 ns");  // sub-nanosecond (inlined getters)
  EXPECT_EQ(formatDuration(0.0123), "0.0123 ns");
  EXPECT_EQ(formatDuration(999.7), "1 µs");  // rounding moves to the next unit
  EXPECT_EQ(formatDuration(999.96e6), "1 s");
  EXPECT_EQ(formatDuration(59.99e9), "1 min");   // not "60 s"
  EXPECT_EQ(formatDuration(7200e9), "120 min");  // two hours
  EXPECT_EQ(formatDuration(100 * 3600e9), "6000 min");
  EXPECT_EQ(formatDuration(-3e6), "-3 ms");
  EXPECT_EQ(formatDuration(std::nan("")), "?");
  EXPECT_EQ(formatDuration(std::numeric_limits<double>::infinity()), "?");
}

TEST(FeaturesFormat, Counts) {
  EXPECT_EQ(formatCount(0), "0");
  EXPECT_EQ(formatCount(950), "950");
  EXPECT_EQ(formatCount(1200), "1.2k");
  EXPECT_EQ(formatCount(1234), "1.23k");
  EXPECT_EQ(formatCount(3.4e6), "3.4M");
  EXPECT_EQ(formatCount(999.9), "1k");
  EXPECT_EQ(formatCount(17.5), "17.5");  // mean loop iterations are fractional
  EXPECT_EQ(formatCount(2.5e12), "2.5T");
  EXPECT_EQ(formatCount(-1200), "-1.2k");
  EXPECT_EQ(formatCount(std::nan("")), "?");
}

TEST(FeaturesFormat, Percent) {
  EXPECT_EQ(formatPercent(8.2), "+820 %");
  EXPECT_EQ(formatPercent(-0.12), "-12 %");
  EXPECT_EQ(formatPercent(0.045), "+4.5 %");
  EXPECT_EQ(formatPercent(0), "+0 %");
}

}  // namespace
}  // namespace perfhat::features
