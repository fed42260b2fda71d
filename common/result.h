// The one error style of parsers: a value or the reason there is none. A parser returns
// Result<T>; the caller tests ok() and reads `value`, or shows `error` (a sentence naming what
// was wrong). No std::string* error out-parameters, no exceptions for input that is merely bad;
// exceptions stay for I/O boundaries and broken invariants.
#pragma once

#include <string>
#include <string_view>
#include <utility>

namespace perfhat {

template <typename T>
struct Result {
  T value{};          // meaningful only when ok()
  std::string error;  // empty when ok()

  bool ok() const { return error.empty(); }
  explicit operator bool() const { return ok(); }

  static Result success(T v) { return Result{std::move(v), {}}; }
  // `why` must not be empty.
  static Result failure(std::string why) { return Result{T{}, std::move(why)}; }
};

// A step that yields nothing but can fail (a reparse, opening a file for writing): only the reason.
template <>
struct Result<void> {
  std::string error;  // empty when ok()

  bool ok() const { return error.empty(); }
  explicit operator bool() const { return ok(); }

  static Result success() { return Result{}; }
  // `why` must not be empty.
  static Result failure(std::string why) { return Result{std::move(why)}; }
};

// A whole unsigned decimal number (a cursor, a limit, a count): digits only, no sign, no space.
Result<unsigned long long> parseUnsigned(std::string_view text);
// A finite number ≥ 0 in any form strtod reads ("1e6", "0.5"), the whole text.
Result<double> parseNonNegative(std::string_view text);

}  // namespace perfhat
