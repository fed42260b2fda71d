// Number formatting shared by every feature, so the editor and `--check` print the same figures.
//
// Rule: at most 3 significant digits, trailing zeros dropped ("3.1 ms", "12 ms", "1.24 s"). The
// value is rounded *before* the unit is chosen, so 999.7 ns prints as "1 µs", never "1000 ns".
#include <cmath>
#include <cstdio>
#include <string>

#include "server/features/features.h"

namespace perfhat::features {
namespace {

// Rounds to 3 significant digits.
double round3(double v) {
  if (v == 0) return 0;
  const double magnitude = std::floor(std::log10(std::fabs(v)));
  const double scale = std::pow(10.0, 2 - magnitude);
  return std::round(v * scale) / scale;
}

// Prints an already rounded, non-negative value with up to 3 significant digits.
std::string digits3(double v) {
  if (v == 0) return "0";
  const int magnitude = static_cast<int>(std::floor(std::log10(v)));
  const int decimals = magnitude >= 2 ? 0 : 2 - magnitude;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  std::string s(buf);
  if (s.find('.') != std::string::npos) {
    while (!s.empty() && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
  }
  return s;
}

}  // namespace

std::string formatDuration(double ns) {
  if (!std::isfinite(ns)) return "?";
  if (ns < 0) return "-" + formatDuration(-ns);
  struct Unit {
    const char* name;
    double ns;     // nanoseconds per unit
    double limit;  // values that round to this many units move to the next unit
  };
  // Minutes are the largest unit: hours print as "120 min", which reads unambiguously beside
  // the smaller figures in the same hover.
  static constexpr Unit kUnits[] = {
      {"ns", 1, 1000}, {"µs", 1e3, 1000}, {"ms", 1e6, 1000}, {"s", 1e9, 60}, {"min", 60e9, 0}};
  for (const Unit& u : kUnits) {
    const double r = round3(ns / u.ns);
    if (u.limit == 0 || r < u.limit) return digits3(r) + " " + u.name;
  }
  return "?";  // unreachable: the last unit has no limit
}

std::string formatDurationRange(double lo_ns, double hi_ns) {
  if (std::isinf(hi_ns)) return formatDuration(lo_ns) + "–?";  // open above: a part has no data
  const std::string lo = formatDuration(lo_ns), hi = formatDuration(hi_ns);
  const size_t lo_space = lo.rfind(' '), hi_space = hi.rfind(' ');
  if (lo_space != std::string::npos && hi_space != std::string::npos &&
      lo.substr(lo_space) == hi.substr(hi_space))
    return lo.substr(0, lo_space) + "–" + hi;
  return lo + "–" + hi;
}

std::string formatCount(double n) {
  if (!std::isfinite(n)) return "?";
  if (n < 0) return "-" + formatCount(-n);
  static constexpr const char* kSuffix[] = {"", "k", "M", "G", "T"};
  double v = n;
  for (size_t i = 0; i < std::size(kSuffix); ++i) {
    const double r = round3(v);
    if (r < 1000 || i + 1 == std::size(kSuffix)) return digits3(r) + kSuffix[i];
    v /= 1000;
  }
  return "?";
}

std::string formatPercent(double fraction) {
  if (!std::isfinite(fraction)) return "?";
  const double pct = fraction * 100;
  const std::string sign = pct < 0 ? "-" : "+";
  return sign + digits3(round3(std::fabs(pct))) + " %";
}

}  // namespace perfhat::features
