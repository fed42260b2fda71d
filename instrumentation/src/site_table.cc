#include "site_table.h"

#include <new>

namespace perfhat::autoinstrument {

PERFHAT_SITE_TABLE_NOINSTR size_t SiteTable::slot_of(const void* fn, size_t mask) noexcept {
  auto x = reinterpret_cast<uintptr_t>(fn);
  x ^= x >> 17;
  x *= 0x9E3779B97F4A7C15ull;
  return static_cast<size_t>(x >> 40) & mask;
}

PERFHAT_SITE_TABLE_NOINSTR detail::Site* SiteTable::find(const void* fn) const noexcept {
  for (const Level* l = &first_; l != nullptr; l = l->next.load(std::memory_order_acquire)) {
    for (size_t i = slot_of(fn, l->mask), n = 0; n <= l->mask; i = (i + 1) & l->mask, ++n) {
      const void* f = l->entries[i].fn.load(std::memory_order_acquire);
      if (f == fn) return l->entries[i].site.load(std::memory_order_relaxed);
      if (f == nullptr) break;
    }
  }
  return nullptr;
}

PERFHAT_SITE_TABLE_NOINSTR bool SiteTable::insert(const void* fn, detail::Site* site) noexcept {
  Level* l = &first_;
  while (l->used >= (l->mask + 1) / 4 * 3) {
    Level* next = l->next.load(std::memory_order_relaxed);
    if (next == nullptr) {
      const size_t size = (l->mask + 1) * kGrowth;
      if (size > kMaxLevelSize) return false;
      auto* entries = new (std::nothrow) Entry[size];
      if (entries == nullptr) return false;
      next = new (std::nothrow) Level{size - 1, entries};
      if (next == nullptr) {
        delete[] entries;
        return false;
      }
      l->next.store(next, std::memory_order_release);
    }
    l = next;
  }
  size_t i = slot_of(fn, l->mask);
  while (l->entries[i].fn.load(std::memory_order_relaxed) != nullptr) i = (i + 1) & l->mask;
  l->entries[i].site.store(site, std::memory_order_relaxed);
  l->entries[i].fn.store(fn, std::memory_order_release);
  ++l->used;
  return true;
}

PERFHAT_SITE_TABLE_NOINSTR size_t SiteTable::levels() const noexcept {
  size_t n = 0;
  for (const Level* l = &first_; l != nullptr; l = l->next.load(std::memory_order_acquire)) ++n;
  return n;
}

}  // namespace perfhat::autoinstrument
