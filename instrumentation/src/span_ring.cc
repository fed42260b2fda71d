// Span rings (span_record.h, SpanRing): mapped, not constructed.
#include <sys/mman.h>

#include <algorithm>
#include <new>

#include "span_record.h"

namespace perfhat::detail {

SpanRing::SpanRing(size_t entries) {
  const size_t fields = sizeof(SpanFields) * entries;
  const size_t attrs_at = (fields + alignof(Attr) - 1) / alignof(Attr) * alignof(Attr);
  const size_t bytes = attrs_at + sizeof(Attr[4]) * entries;
  void* mem = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mem == MAP_FAILED) throw std::bad_alloc();
  // SpanFields and Attr are aggregates of integers, doubles, pointers and chars: implicit-lifetime
  // types, whose objects the zero-filled pages hold as soon as an entry is written.
  fields_ = static_cast<SpanFields*>(mem);
  attrs_ = reinterpret_cast<Attr(*)[4]>(static_cast<char*>(mem) + attrs_at);
  bytes_ = bytes;
}

SpanRing::~SpanRing() {
  if (fields_ != nullptr) ::munmap(fields_, bytes_);
}

void SpanRing::swap(SpanRing& o) noexcept {
  std::swap(fields_, o.fields_);
  std::swap(attrs_, o.attrs_);
  std::swap(bytes_, o.bytes_);
}

void SpanRing::read(size_t i, SpanRecord& out) const {
  static_cast<SpanFields&>(out) = fields_[i];
  const int n = std::min<int>(out.nattr, 4);
  std::copy(attrs_[i], attrs_[i] + n, out.attrs);
}

}  // namespace perfhat::detail
