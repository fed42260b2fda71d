// RFC 3339 timestamps of the read API: formatting agrees with the C library's UTC calendar, and
// parsing inverts it (to the second).
#include "feedback-handler/util/rfc3339.h"

#include <gtest/gtest.h>

#include <ctime>
#include <limits>
#include <random>
#include <string>

namespace perfhat::handler {
namespace {

std::string viaLibc(int64_t unix_s) {
  std::time_t t = static_cast<std::time_t>(unix_s);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

TEST(Rfc3339, FormatsLikeTheCLibraryAndParsesBack) {
  std::mt19937_64 rng(42);
  // 1970 … 2255 (int64 nanoseconds end in 2262), plus the edges: epoch, leap days, the last
  // second of a year.
  std::uniform_int_distribution<int64_t> secs(0, 9'000'000'000LL);
  std::vector<int64_t> samples = {0, 951'782'400, 951'868'799, 1'709'164'800, 1'735'689'599};
  for (int i = 0; i < 20000; ++i) samples.push_back(secs(rng));
  for (int64_t s : samples) {
    const int64_t ns = s * 1'000'000'000 + 123'456'789;
    const std::string text = formatRfc3339(ns);
    ASSERT_EQ(text, viaLibc(s)) << s;
    ASSERT_EQ(parseRfc3339(text), s * 1'000'000'000) << text;
  }
}

TEST(Rfc3339, BeforeTheEpochRoundsDownToTheSecond) {
  EXPECT_EQ(formatRfc3339(-1), "1969-12-31T23:59:59Z");
  EXPECT_EQ(formatRfc3339(-1'000'000'000), "1969-12-31T23:59:59Z");
  EXPECT_EQ(formatRfc3339(-1'000'000'001), "1969-12-31T23:59:58Z");
}

TEST(Rfc3339, RejectsMalformedText) {
  for (const char* bad : {"", "2026-11-22", "2026-13-01T00:00:00Z", "2026-02-30T00:00:00Z",
                          "2026-11-22T24:00:00Z", "2026-11-22T10:00:00", "2026-11-22T10:00:00Zx",
                          "2026-11-22T10:00:00.Z", "2026-11-22T10:00:00+2:00"}) {
    EXPECT_FALSE(parseRfc3339(bad).has_value()) << bad;
  }
  EXPECT_EQ(parseRfc3339("2026-11-22T12:00:00+02:00"), parseRfc3339("2026-11-22T10:00:00Z"));
}

TEST(Rfc3339, DatesBeyondInt64NanosecondsAreOutOfRange) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(parseRfc3339("2262-04-11T23:47:16.854775807Z"), kMax);
  EXPECT_FALSE(parseRfc3339("2262-04-11T23:47:16.854775808Z").has_value());
  EXPECT_FALSE(parseRfc3339("9999-12-31T23:59:59Z").has_value());
  EXPECT_EQ(parseRfc3339("1677-09-21T00:12:44Z"), int64_t{-9'223'372'036} * 1'000'000'000);
  EXPECT_FALSE(parseRfc3339("1677-09-21T00:12:43Z").has_value());
  EXPECT_FALSE(parseRfc3339("0000-01-01T00:00:00-23:59").has_value());
}

}  // namespace
}  // namespace perfhat::handler
