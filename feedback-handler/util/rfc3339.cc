#include "feedback-handler/util/rfc3339.h"

#include <chrono>
#include <cstdio>

namespace perfhat::handler {

std::string formatRfc3339(int64_t unix_ns) {
  using namespace std::chrono;
  sys_seconds t{
      seconds{unix_ns >= 0 ? unix_ns / 1'000'000'000 : (unix_ns + 1) / 1'000'000'000 - 1}};
  auto day = floor<days>(t);
  year_month_day ymd{day};
  hh_mm_ss hms{t - day};
  const int y = static_cast<int>(ymd.year());
  const auto h = static_cast<int>(hms.hours().count()),
             mi = static_cast<int>(hms.minutes().count()),
             sec = static_cast<int>(hms.seconds().count());
  if (y < 0 || y > 9999) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02dZ", y,
                  static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()), h, mi, sec);
    return buf;
  }
  // Digits written directly: batchGet formats several timestamps per item, and snprintf's
  // format parsing was 6 % of a 10,000-key batchGet.
  std::string out = "0000-00-00T00:00:00Z";
  auto put = [&out](size_t pos, int v, int width) {
    for (int i = width - 1; i >= 0; --i, v /= 10) out[pos + i] = static_cast<char>('0' + v % 10);
  };
  put(0, y, 4);
  put(5, static_cast<int>(static_cast<unsigned>(ymd.month())), 2);
  put(8, static_cast<int>(static_cast<unsigned>(ymd.day())), 2);
  put(11, h, 2);
  put(14, mi, 2);
  put(17, sec, 2);
  return out;
}

std::optional<int64_t> parseRfc3339(std::string_view s) {
  using namespace std::chrono;
  auto digits = [&](size_t pos, size_t n, int& out) {
    if (pos + n > s.size()) return false;
    out = 0;
    for (size_t i = pos; i < pos + n; ++i) {
      if (s[i] < '0' || s[i] > '9') return false;
      out = out * 10 + (s[i] - '0');
    }
    return true;
  };
  int Y, M, D, h, m, sec;
  if (!digits(0, 4, Y) || s.size() < 19 || s[4] != '-' || !digits(5, 2, M) || s[7] != '-' ||
      !digits(8, 2, D) || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') || !digits(11, 2, h) ||
      s[13] != ':' || !digits(14, 2, m) || s[16] != ':' || !digits(17, 2, sec)) {
    return std::nullopt;
  }
  year_month_day ymd{year{Y}, month{static_cast<unsigned>(M)}, day{static_cast<unsigned>(D)}};
  if (!ymd.ok() || h > 23 || m > 59 || sec > 60) return std::nullopt;
  size_t pos = 19;
  int64_t frac_ns = 0;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    int64_t scale = 100'000'000;
    size_t start = pos;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      frac_ns += (s[pos] - '0') * scale;
      scale /= 10;
      ++pos;
    }
    if (pos == start) return std::nullopt;
  }
  int64_t offset_s = 0;
  if (pos < s.size() && (s[pos] == 'Z' || s[pos] == 'z')) {
    ++pos;
  } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    int oh, om;
    if (!digits(pos + 1, 2, oh) || pos + 3 >= s.size() || s[pos + 3] != ':' ||
        !digits(pos + 4, 2, om) || oh > 23 || om > 59) {
      return std::nullopt;
    }
    offset_s = int64_t{s[pos] == '+' ? 1 : -1} * (oh * 3600 + om * 60);
    pos += 6;
  } else {
    return std::nullopt;
  }
  if (pos != s.size()) return std::nullopt;
  int64_t secs = sys_days{ymd}.time_since_epoch().count() * 86400LL + int64_t{h} * 3600 +
                 int64_t{m} * 60 + sec - offset_s;
  // int64 nanoseconds span 1677-09-21 … 2262-04-11; a date outside is out of range, not UB.
  int64_t ns = 0;
  if (__builtin_mul_overflow(secs, int64_t{1'000'000'000}, &ns) ||
      __builtin_add_overflow(ns, frac_ns, &ns)) {
    return std::nullopt;
  }
  return ns;
}

}  // namespace perfhat::handler
