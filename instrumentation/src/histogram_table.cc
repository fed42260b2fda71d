#include "histogram_table.h"

#include <sys/mman.h>

#include <new>

namespace perfhat::detail {
namespace {

constexpr size_t kCellBytes = sizeof(HistogramCell) * HistogramTable::kMaxCells;
constexpr size_t kIndexBytes = sizeof(uint32_t) * 2 * HistogramTable::kMaxCells;
constexpr size_t kArenaBytes = sizeof(double) * kChunkBins * HistogramTable::kMaxChunks;

void* reserve_zeroed(size_t bytes) {
  // Anonymous pages are zero-filled and committed only when touched.
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

}  // namespace

const double* sketch_bin_bounds() noexcept {
  // A function-local static: probes may record during other translation units' static
  // initialization, before a namespace-scope table would be built.
  static const auto* bounds = [] {
    auto* b = new double[kBinLimit];
    const double log_gamma = std::log(kSketchGamma);
    for (int i = 0; i < kBinLimit; ++i) b[i] = std::exp(i * log_gamma);
    return b;
  }();
  return bounds;
}

HistogramTable::~HistogramTable() {
  if (cells_ != nullptr) {
    for (uint32_t i = 0; i < used_.load(std::memory_order_relaxed); ++i) cells_[i].~HistogramCell();
    ::munmap(cells_, kCellBytes);
  }
  if (index_ != nullptr) ::munmap(index_, kIndexBytes);
  if (arena_ != nullptr) ::munmap(arena_, kArenaBytes);
}

bool HistogramTable::reserve() noexcept {
  if (failed_) return false;
  auto* cells = static_cast<HistogramCell*>(reserve_zeroed(kCellBytes));
  auto* index = static_cast<uint32_t*>(reserve_zeroed(kIndexBytes));
  auto* arena = static_cast<double*>(reserve_zeroed(kArenaBytes));
  if (cells == nullptr || index == nullptr || arena == nullptr) {
    if (cells != nullptr) ::munmap(cells, kCellBytes);
    if (index != nullptr) ::munmap(index, kIndexBytes);
    if (arena != nullptr) ::munmap(arena, kArenaBytes);
    failed_ = true;
    return false;
  }
  cells_ = cells;
  arena_ = arena;
  bounds_ = sketch_bin_bounds();
  index_ = index;
  return true;
}

HistogramCell* HistogramTable::insert(uint64_t key) noexcept {
  if (index_ == nullptr && !reserve()) return nullptr;
  uint32_t n = used_.load(std::memory_order_relaxed);
  if (n >= kMaxCells) return nullptr;
  uint32_t h = hash(key);
  while (index_[h] != 0) h = (h + 1) & kIndexMask;
  // Zeroed memory is not yet an object: construct it, then publish the key and the count.
  HistogramCell* c = new (&cells_[n]) HistogramCell();
  c->key.store(key, std::memory_order_relaxed);
  index_[h] = n + 1;
  used_.store(n + 1, std::memory_order_release);
  return c;
}

double* HistogramTable::new_chunk(HistogramCell& c, int chunk) noexcept {
  if (chunks_used_ >= kMaxChunks) return nullptr;
  double* p = arena_ + size_t{chunks_used_++} * kChunkBins;  // zero-filled
  c.chunks[chunk].store(p, std::memory_order_release);
  return p;
}

}  // namespace perfhat::detail
