// Integers read from outside JSON (LSP messages, feedback files, handler responses, exports).
// nlohmann's get<int>() static_casts a floating-point value: undefined behaviour when it is out
// of the type's range (`"line": 1e99`, found by fuzzing) and a silent truncation of 2.5. These
// accept an integer in the type's range, or a whole floating-point value in range (JSON writers
// may print 3 as 3.0), and otherwise throw nlohmann::json::type_error, which every parser of
// outside JSON already turns into its own clear error.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

#include <nlohmann/json.hpp>

namespace perfhat {

template <typename T>
T integerFrom(const nlohmann::json& j) {
  static_assert(std::is_integral_v<T> && !std::is_same_v<T, bool>);
  auto outOfRange = [&]() {
    return nlohmann::json::type_error::create(
        302, "number " + j.dump() + " is not an integer in range", &j);
  };
  if (j.is_number_unsigned()) {
    const auto v = j.get<uint64_t>();
    if (!std::in_range<T>(v)) throw outOfRange();
    return static_cast<T>(v);
  }
  if (j.is_number_integer()) {
    const auto v = j.get<int64_t>();
    if (!std::in_range<T>(v)) throw outOfRange();
    return static_cast<T>(v);
  }
  if (j.is_number_float()) {
    const double d = j.get<double>();
    // [lo, hi) with both ends exact in a double: -2^digits (or 0) and 2^digits.
    constexpr double hi =
        2.0 * static_cast<double>(uint64_t{1} << (std::numeric_limits<T>::digits - 1));
    constexpr double lo = std::is_signed_v<T> ? -hi : 0.0;
    if (!(d >= lo && d < hi) || std::trunc(d) != d) throw outOfRange();
    return static_cast<T>(d);
  }
  throw nlohmann::json::type_error::create(
      302, std::string("type must be number, but is ") + j.type_name(), &j);
}

// j.get<T>(), with integer types read through integerFrom.
template <typename T>
T valueFrom(const nlohmann::json& j) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    return integerFrom<T>(j);
  } else {
    return j.template get<T>();
  }
}

// `obj[key]` as an integer, or `fallback` when the key is absent or null.
template <typename T>
T integerOr(const nlohmann::json& obj, const char* key, T fallback) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return fallback;
  return integerFrom<T>(*it);
}

}  // namespace perfhat
