// Per-thread histograms of the aggregate export mode (PERFHAT_EXPORT=aggregates,
// docs/aggregate-export.md): instead of one span per recorded call, the call's duration goes into
// a DDSketch-binned histogram of its (site, caller) pair, its loop iterations and result size
// into histograms of their own. The background thread exports differences of these cumulative
// histograms every interval.
//
// One writer (the owning thread), one concurrent reader (the export path), no locks and no
// read-modify-write instructions: every counter only grows and is written with relaxed stores,
// so the reader sees each counter whole and a later read never goes backwards; a cell is
// published (release) only once its key is set. Memory is reserved once per thread (virtual,
// committed as touched) and bounded: when the cells or bin chunks run out, calls are dropped
// and counted, never blocked on or allocated for.
#pragma once

#include <atomic>
#include <bit>
#include <cmath>
#include <cstdint>

namespace perfhat::detail {

// DDSketch with relative accuracy 1 %: the handler's sketches (common/ddsketch.h) use the same
// bins, so exported histograms merge into them exactly.
inline constexpr double kSketchGamma = 1.01 / 0.99;
inline const double kSketchInvLogGamma = 1.0 / std::log(kSketchGamma);

// Bins kept per cell: indexes [0, kBinLimit) cover values 1 .. ~6e17 (ns: 19 years); larger
// values count in the last bin, values below 1 (and 0) in the zero count.
inline constexpr int kChunkBins = 64;
inline constexpr int kChunks = 32;
inline constexpr int kBinLimit = kChunkBins * kChunks;

// Upper bounds of the bins: bin i holds (gamma^(i-1), gamma^i]. Built on first use.
const double* sketch_bin_bounds() noexcept;

// DDSketch bin of v >= 1: ceil(ln v / ln gamma), as common/ddsketch.cc computes it, without a
// call to log (a third of the recording's cost): log2 from the double's exponent and a
// quadratic in its mantissa (error < 0.27 bins), truncated + 1 (ceil without SSE4.1 costs ~18
// instructions; the two differ only at integers), then one step against the exact bounds,
// which the two errors together (< 1 bin either way) never exceed.
inline int sketch_bin(double v, const double* bounds) noexcept {
  constexpr double kBinsPerOctave = 0.69314718055994530942 / 0.020000666706669;  // ln 2 / ln γ
  const auto bits = std::bit_cast<uint64_t>(v);
  const int e = static_cast<int>(bits >> 52) - 1023;
  const double f =
      std::bit_cast<double>((bits & 0x000FFFFFFFFFFFFFull) | 0x3FF0000000000000ull) - 1.0;
  const double log2v = e + f * (1.3465553 - 0.3465553 * f);
  const double x = log2v * kBinsPerOctave;
  if (!(x < kBinLimit - 1)) return kBinLimit - 1;  // ~6e17 and up: the last bin
  int i = x > 0 ? static_cast<int>(x) + 1 : 0;
  if (v > bounds[i]) return i + 1 < kBinLimit ? i + 1 : kBinLimit - 1;
  if (i > 0 && v <= bounds[i - 1]) return i - 1;
  return i;
}
inline int sketch_bin(double v) noexcept { return sketch_bin(v, sketch_bin_bounds()); }

enum class CellKind : uint8_t { kLatency = 1, kLoop = 2, kSize = 3 };

// kLatency: sub = caller site (0 = none); kLoop: sub = source line; kSize: sub = 0.
inline uint64_t cell_key(CellKind kind, uint32_t site, uint32_t sub) noexcept {
  return (uint64_t{static_cast<uint8_t>(kind)} << 56) | (uint64_t{sub} << 20) | site;
}
inline CellKind key_kind(uint64_t key) { return static_cast<CellKind>(key >> 56); }
inline uint32_t key_site(uint64_t key) { return static_cast<uint32_t>(key & 0xFFFFF); }
inline uint32_t key_sub(uint64_t key) { return static_cast<uint32_t>((key >> 20) & 0xFFFFFFFFF); }

struct HistogramCell {
  std::atomic<uint64_t> key{0};
  std::atomic<double> zero{0};     // weighted values below 1
  std::atomic<double> sum{0};      // weighted sum of values
  std::atomic<double> errors{0};   // kLatency: weighted failed calls
  std::atomic<double> parents{0};  // kLatency: weighted distinct caller invocations
  uint64_t last_invocation = 0;    // owner only: the caller invocation counted last
  std::atomic<double*> chunks[kChunks] = {};

  static void add(std::atomic<double>& a, double v) noexcept {
    a.store(a.load(std::memory_order_relaxed) + v, std::memory_order_relaxed);
  }
};

class HistogramTable {
 public:
  static constexpr uint32_t kMaxCells = 16384;
  static constexpr uint32_t kMaxChunks = 32768;  // 16 MB of bins per thread at most

  HistogramTable() = default;
  ~HistogramTable();
  HistogramTable(const HistogramTable&) = delete;
  HistogramTable& operator=(const HistogramTable&) = delete;

  // The cell of `key`, created on first use; nullptr when the table is full or its memory could
  // not be reserved. Owner thread only.
  HistogramCell* cell(uint64_t key) noexcept {
    if (index_ != nullptr) [[likely]] {
      for (uint32_t h = hash(key);; h = (h + 1) & kIndexMask) {
        uint32_t c = index_[h];
        if (c == 0) break;
        if (cells_[c - 1].key.load(std::memory_order_relaxed) == key) return &cells_[c - 1];
      }
    }
    return insert(key);
  }

  // Adds `v` with weight `w` to `c`; false (nothing added) when no bin chunk is left. Owner only.
  bool add(HistogramCell& c, double v, double w) noexcept {
    if (!(v >= 1)) {
      HistogramCell::add(c.zero, w);
    } else {
      int b = sketch_bin(v, bounds_);
      double* chunk = c.chunks[b / kChunkBins].load(std::memory_order_relaxed);
      if (chunk == nullptr && (chunk = new_chunk(c, b / kChunkBins)) == nullptr) return false;
      auto& bin = reinterpret_cast<std::atomic<double>*>(chunk)[b % kChunkBins];
      HistogramCell::add(bin, w);
    }
    HistogramCell::add(c.sum, v * w);
    return true;
  }

  // Reader side: cells [0, published()) are complete.
  uint32_t published() const noexcept { return used_.load(std::memory_order_acquire); }
  const HistogramCell& at(uint32_t i) const noexcept { return cells_[i]; }
  static double bin(const double* chunk, int i) noexcept {
    return reinterpret_cast<const std::atomic<double>*>(chunk)[i].load(std::memory_order_relaxed);
  }

 private:
  static constexpr uint32_t kIndexSize = 2 * kMaxCells;  // load factor <= 1/2
  static constexpr uint32_t kIndexMask = kIndexSize - 1;
  static uint32_t hash(uint64_t key) noexcept {
    return static_cast<uint32_t>((key * 0x9E3779B97F4A7C15ull) >> 40) & kIndexMask;
  }
  [[gnu::noinline]] HistogramCell* insert(uint64_t key) noexcept;
  [[gnu::noinline]] double* new_chunk(HistogramCell& c, int chunk) noexcept;
  bool reserve() noexcept;

  HistogramCell* cells_ = nullptr;  // kMaxCells, reserved on first use
  uint32_t* index_ = nullptr;       // open addressing: cell position + 1, 0 = empty
  double* arena_ = nullptr;         // kMaxChunks chunks of kChunkBins bins
  const double* bounds_ = nullptr;  // sketch_bin_bounds(), set with the memory
  uint32_t chunks_used_ = 0;
  std::atomic<uint32_t> used_{0};
  bool failed_ = false;
};

}  // namespace perfhat::detail
