// libperfhat's error style for a step that can be refused (a setting, the sampler's timer): the
// reason, or nothing when it went through. The rest of the tree writes the same idea as
// common/result.h's Result<void>; libperfhat includes nothing of the tree (it installs on its
// own, scripts/layers_check.py), so it keeps this private equivalent.
#pragma once

#include <string>
#include <utility>

namespace perfhat::detail {

struct Status {
  std::string error;  // empty when ok()

  bool ok() const { return error.empty(); }
  explicit operator bool() const { return ok(); }

  static Status success() { return Status{}; }
  // `why` must not be empty.
  static Status failure(std::string why) { return Status{std::move(why)}; }
};

}  // namespace perfhat::detail
