// FNV-1a, 64 bits: the hash of in-memory keys and content stamps (not cryptographic).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace perfhat {

inline constexpr uint64_t kFnv1aBasis = 14695981039346656037ULL;

struct Fnv1a {
  uint64_t h = kFnv1aBasis;

  void bytes(const void* data, size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < n; ++i) {
      h ^= p[i];
      h *= 1099511628211ULL;
    }
  }
  // A field: its bytes and a separator, so "ab"+"c" differs from "a"+"bc".
  void text(std::string_view s) {
    bytes(s.data(), s.size());
    bytes("", 1);
  }
  void number(uint64_t v) { bytes(&v, sizeof v); }
};

}  // namespace perfhat
