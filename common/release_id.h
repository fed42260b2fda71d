// A release id as it travels between perfhat-plan, the runtime's resource attributes and the
// handler: 1-64 letters, digits, '.', '_' or '-'. (libperfhat checks the same rule on its own,
// instrumentation/src/variant_mask.cc: it includes nothing from the rest of the tree.)
#pragma once

#include <algorithm>
#include <cstddef>
#include <string_view>

namespace perfhat {

inline constexpr std::size_t kMaxReleaseIdBytes = 64;

inline bool isReleaseId(std::string_view id) {
  if (id.empty() || id.size() > kMaxReleaseIdBytes) return false;
  return std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
  });
}

}  // namespace perfhat
