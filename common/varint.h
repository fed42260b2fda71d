// Protocol Buffers base-128 varints, appended to a string: the one writer for the handler's
// protobuf answers, its OTLP test encoder and the sketch serialization. (libperfhat keeps its own
// pointer-based writer: it is a self-contained library with a C++17 public surface.)
#pragma once

#include <cstdint>
#include <string>

namespace perfhat {

inline void appendVarint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

}  // namespace perfhat
