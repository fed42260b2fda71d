// CRC-32 (IEEE 802.3, the polynomial and value of zlib's crc32()): the checksum of stored
// sketch blobs and intake-log records.
//
// zlib is fast on long buffers but pays ~80 ns of set-up per call, which dominated the ~100-byte
// sketch blobs a batchGet checks by the tens of thousands; short inputs take a table-driven
// (slicing-by-8) path instead. Both give the same value.
#pragma once

#include <cstdint>
#include <string_view>

namespace perfhat {

// The CRC-32 of `data` continuing from `crc` (0 to start), as zlib's crc32(crc, data, size).
uint32_t crc32(std::string_view data, uint32_t crc = 0);

}  // namespace perfhat
