// Span rings (engine.h, SpanRing): mapped, not constructed.
#include <sys/mman.h>

#include <new>

#include "engine.h"

namespace perfhat::detail {

void SpanRingFree::operator()(SpanRecord* ring) const noexcept {
  if (ring != nullptr) ::munmap(ring, bytes);
}

SpanRing make_span_ring(size_t entries) {
  const size_t bytes = sizeof(SpanRecord) * entries;
  void* mem = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mem == MAP_FAILED) throw std::bad_alloc();
  // SpanRecord is an aggregate of integers, doubles and pointers: an implicit-lifetime type,
  // whose objects the zero-filled pages hold as soon as an entry is written.
  return SpanRing(static_cast<SpanRecord*>(mem), SpanRingFree{bytes});
}

}  // namespace perfhat::detail
