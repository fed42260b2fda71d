#include "common/crc32.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <random>
#include <string>

namespace perfhat {
namespace {

uint32_t zlibCrc(std::string_view s, uint32_t start = 0) {
  return static_cast<uint32_t>(
      ::crc32(start, reinterpret_cast<const Bytef*>(s.data()), static_cast<uInt>(s.size())));
}

TEST(Crc32, KnownValues) {
  EXPECT_EQ(crc32(""), 0u);
  EXPECT_EQ(crc32("123456789"), 0xCBF43926u);  // the standard check value of CRC-32/IEEE
}

// Both paths (table below 256 bytes, zlib above) give zlib's value at every length and
// alignment, from any starting CRC, so blobs and records written before stay valid.
TEST(Crc32, EqualsZlibAtEveryLengthAlignmentAndStart) {
  std::mt19937 rng(7);
  std::string buf(2048 + 8, '\0');
  for (char& c : buf) c = static_cast<char>(rng());
  for (size_t offset = 0; offset < 8; ++offset) {
    for (size_t len = 0; len <= 600; ++len) {
      const std::string_view s(buf.data() + offset, len);
      ASSERT_EQ(crc32(s), zlibCrc(s)) << "offset " << offset << " length " << len;
    }
  }
  const std::string_view all(buf);
  EXPECT_EQ(crc32(all), zlibCrc(all));
  // Continuing: the CRC of a whole equals the CRC of its second part from the first part's.
  for (size_t split : {0, 5, 255, 256, 300, 2000}) {
    EXPECT_EQ(crc32(all.substr(split), crc32(all.substr(0, split))), zlibCrc(all)) << split;
  }
}

}  // namespace
}  // namespace perfhat
