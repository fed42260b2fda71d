// SpanRing (span_record.h): entries read back as written, and spans without attributes never
// touch the attributes' pages.
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "span_record.h"

namespace {

using perfhat::detail::Attr;
using perfhat::detail::SpanFields;
using perfhat::detail::SpanRecord;
using perfhat::detail::SpanRing;

// Pages of [begin, end) resident in memory (mincore), rounded out to whole pages.
size_t resident_pages(const void* begin, const void* end) {
  const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t from = reinterpret_cast<uintptr_t>(begin) & ~(page - 1);
  const uintptr_t to = (reinterpret_cast<uintptr_t>(end) + page - 1) & ~(page - 1);
  std::vector<unsigned char> in((to - from) / page);
  if (::mincore(reinterpret_cast<void*>(from), to - from, in.data()) != 0) return SIZE_MAX;
  size_t n = 0;
  for (unsigned char c : in) n += c & 1;
  return n;
}

TEST(SpanRing, EntriesReadBackWithTheirAttributes) {
  SpanRing ring(16);
  SpanFields& f = ring.fields(3);
  f.site = 7;
  f.start = 100;
  f.end = 250;
  f.parent = 42;
  f.nattr = 2;
  Attr* a = ring.attrs(3);
  a[0].key = "rows";
  a[0].kind = Attr::kInt;
  a[0].i = 12;
  a[1].key = "table";
  a[1].kind = Attr::kString;
  std::strcpy(a[1].s, "users");
  SpanRecord r;
  r.attrs[2].i = 99;  // beyond nattr: left as it was
  ring.read(3, r);
  EXPECT_EQ(r.site, 7u);
  EXPECT_EQ(r.end - r.start, 150u);
  EXPECT_EQ(r.parent, 42u);
  ASSERT_EQ(r.nattr, 2);
  EXPECT_STREQ(r.attrs[0].key, "rows");
  EXPECT_EQ(r.attrs[0].i, 12);
  EXPECT_STREQ(r.attrs[1].s, "users");
  EXPECT_EQ(r.attrs[2].i, 99);
  // An entry never written reads as a default span: zero-filled pages.
  SpanRecord empty;
  ring.read(9, empty);
  EXPECT_EQ(empty.site, 0u);
  EXPECT_EQ(empty.nattr, 0);
}

TEST(SpanRing, SpansWithoutAttributesLeaveTheAttributesPagesUntouched) {
  constexpr size_t kEntries = 4096;
  SpanRing ring(kEntries);
  for (size_t i = 0; i < kEntries; ++i) {
    SpanFields& f = ring.fields(i);
    f.site = 1;
    f.start = i;
    f.end = i + 1;
    f.nattr = 0;
  }
  const Attr* attrs = ring.attrs(0);
  EXPECT_EQ(resident_pages(attrs, attrs + 4 * kEntries), 0u);
  // The fields of 4,096 entries: 88 bytes each, 88 pages, far fewer than whole records' 376.
  EXPECT_LE(resident_pages(&ring.fields(0), &ring.fields(kEntries - 1) + 1),
            sizeof(SpanFields) * kEntries / 4096 + 2);
  ring.attrs(kEntries - 1)[0].i = 5;  // a span with one: its attributes' page only
  EXPECT_EQ(resident_pages(attrs, attrs + 4 * kEntries), 1u);
}

TEST(SpanRing, MovesOwnTheMapping) {
  SpanRing a(16);
  a.fields(0).site = 3;
  SpanRing b(std::move(a));
  EXPECT_EQ(b.fields(0).site, 3u);
  SpanRing c(16);
  c = std::move(b);
  EXPECT_EQ(c.fields(0).site, 3u);
}

}  // namespace
