// The hooks' function address -> Site table, read without a lock: entries are written once
// (value before key) by one writer at a time, and never removed. It starts small and grows by
// levels: a process touches one page per few functions it calls instead of one per function
// (a single 512 KB table spread a process's first hundred functions over a hundred pages, each
// a page fault). Levels are never freed: hooks run in static destructors.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#define PERFHAT_SITE_TABLE_NOINSTR __attribute__((no_instrument_function))

namespace perfhat::detail {
struct Site;
}  // namespace perfhat::detail

namespace perfhat::autoinstrument {

class SiteTable {
 public:
  // 1,024 entries (16 KB) first; each further level 8 times the last, up to 2^19 entries.
  static constexpr size_t kFirstLevelSize = size_t{1} << 10;
  static constexpr size_t kGrowth = 8;
  static constexpr size_t kMaxLevelSize = size_t{1} << 19;
  struct Entry {
    std::atomic<const void*> fn{nullptr};
    std::atomic<detail::Site*> site{nullptr};
  };

  // `first`: kFirstLevelSize entries of static storage (zero pages until used). Constant
  // initialization: hooks may run before any dynamic initializer.
  constexpr explicit SiteTable(Entry* first) : first_{kFirstLevelSize - 1, first} {}

  // The Site of `fn`, or nullptr. Any thread, no lock.
  detail::Site* find(const void* fn) const noexcept;
  // Adds `fn` (not yet in the table); false when every level is 3/4 full and the last may not
  // grow (the caller keeps the Site elsewhere). One caller at a time.
  bool insert(const void* fn, detail::Site* site) noexcept;
  // Levels in use (tests).
  size_t levels() const noexcept;

 private:
  struct Level {
    size_t mask;
    Entry* entries;
    size_t used = 0;  // written by insert only
    std::atomic<Level*> next{nullptr};
  };
  static size_t slot_of(const void* fn, size_t mask) noexcept;

  Level first_;
};

}  // namespace perfhat::autoinstrument
