// Histograms of the aggregate export mode (PERFHAT_EXPORT=aggregates, docs/aggregate-export.md).
//
// A recorded call does not become a span: the owning thread appends a 32-byte CallRecord to its
// ring (sequential writes: a cache line per two calls), and the background thread, every wake,
// folds the records into DDSketch-binned histograms per (site, caller), loop and result size,
// which it exports every interval. Folding in one thread keeps the histograms in that thread's
// cache. Updating per-thread histograms from the application's threads instead missed the cache
// on the cell and the bin of nearly every call on the sample service: libperfhat took 9.9 % of
// the service's CPU that way and 7.8 % this way (perf, every call recorded; bench/README.md).
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

namespace perfhat::detail {

// DDSketch with relative accuracy 1 %: the handler's sketches (common/ddsketch.h) use the same
// bins, so exported histograms merge into them exactly.
inline constexpr double kSketchGamma = 1.01 / 0.99;

// Bins kept: indexes [0, kBinLimit) cover values 1 .. ~6e17 (ns: 19 years); larger values count
// in the last bin, values below 1 (and 0) in the zero count.
inline constexpr int kBinLimit = 2048;

// Upper bounds of the bins: bin i holds (gamma^(i-1), gamma^i]. Built on first use.
const double* sketch_bin_bounds() noexcept;

// DDSketch bin of v >= 1: ceil(ln v / ln gamma), as common/ddsketch.cc computes it, without a
// call to log: log2 from the double's exponent and a quadratic in its mantissa (error < 0.27
// bins), truncated + 1 (ceil without SSE4.1 costs ~18 instructions; the two differ only at
// integers), then one step against the exact bounds, which the two errors together (< 1 bin
// either way) never exceed.
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

// One recorded call (kLatency), or one PERFHAT_LOOP_ITERATIONS / PERFHAT_RESULT_SIZE value of it.
struct CallRecord {
  uint64_t value;  // kLatency: duration in ticks; kLoop, kSize: the value
  // kLatency: the caller's invocation number on this thread (0 = none) in the low 48 bits; with
  // bit 63 set, bits 48..62 hold the low 15 bits of the call's own invocation number (self time,
  // see fold_self_time).
  uint64_t caller_call;
  uint32_t site;
  uint32_t sub;  // kLatency: caller site (0 = none); kLoop: source line; kSize: 0
  float weight;  // sampling weight
  CellKind kind;
  bool error;
};
static_assert(sizeof(CallRecord) == 32);

inline constexpr uint64_t kOwnInvocationKnown = uint64_t{1} << 63;
inline constexpr int kOwnInvocationShift = 48;
inline constexpr uint64_t kOwnInvocationBits = 0x7FFF;
inline uint64_t pack_caller_call(uint64_t caller_call, uint64_t own_invocation) noexcept {
  return caller_call | kOwnInvocationKnown |
         ((own_invocation & kOwnInvocationBits) << kOwnInvocationShift);
}

// Whether a ring's head moving from `before` to `after` (by less than half the ring) crossed a
// multiple of half its capacity: the owning thread then checks whether half the ring is waiting
// and wakes the background thread. Once per half ring, so the contended tail is read rarely. A
// ring of capacity 0 (none) never crosses.
inline bool crossed_half_ring(uint64_t before, uint64_t after, uint64_t capacity) noexcept {
  const uint64_t half = capacity / 2;
  return half != 0 && (before ^ after) >= half;
}

// kLatency: sub = caller site; kLoop: sub = source line; kSize: sub = 0.
inline uint64_t cell_key(CellKind kind, uint32_t site, uint32_t sub) noexcept {
  return (uint64_t{static_cast<uint8_t>(kind)} << 56) | (uint64_t{sub} << 20) | site;
}
inline CellKind key_kind(uint64_t key) { return static_cast<CellKind>(key >> 56); }
inline uint32_t key_site(uint64_t key) { return static_cast<uint32_t>(key & 0xFFFFF); }
inline uint32_t key_sub(uint64_t key) { return static_cast<uint32_t>((key >> 20) & 0xFFFFFFFFF); }

// A weighted distribution in DDSketch bins, plus what the handler's rows carry beside it.
struct Histogram {
  double zero = 0;           // weighted values below 1
  double sum = 0;            // weighted sum of values
  double errors = 0;         // kLatency: weighted failed calls
  double parents = 0;        // kLatency: weighted distinct caller invocations
  int lo = 0;                // bins[i] counts bin lo + i
  std::vector<double> bins;  // grown to cover the values seen
  // kLatency: weighted calls recorded at a rate below 1, and their records.
  double sampled_calls = 0;
  double sampled_records = 0;

  void add(double v, double w, const double* bounds) {
    if (!(v >= 1)) {
      zero += w;
    } else {
      const int b = sketch_bin(v, bounds);
      if (bins.empty()) {
        lo = b;
        bins.assign(1, 0.0);
      } else if (b < lo) {
        bins.insert(bins.begin(), static_cast<size_t>(lo - b), 0.0);
        lo = b;
      } else if (b - lo >= static_cast<int>(bins.size())) {
        bins.resize(static_cast<size_t>(b - lo + 1), 0.0);
      }
      bins[static_cast<size_t>(b - lo)] += w;
    }
    sum += v * w;
  }
  bool empty() const {
    return zero == 0 && bins.empty() && errors == 0 && parents == 0 && sampled_calls == 0;
  }
  // Empty again, keeping the bins' storage for the next interval.
  void clear() {
    zero = sum = errors = parents = sampled_calls = sampled_records = 0;
    bins.clear();
  }
};

// The histograms of one probe site: latency per caller, iterations per loop line, sizes.
// Sub-keys are few per site (its callers, its loops), so a short vector searched linearly beats
// a hash map on the fold's path.
struct SiteHistograms {
  std::vector<std::pair<uint32_t, Histogram>> latency;  // by caller site (0 = none)
  std::vector<std::pair<uint32_t, Histogram>> loops;    // by source line
  Histogram size;
  Histogram self;  // self time (ns): each call's duration less its recorded direct children's

  static Histogram& of(std::vector<std::pair<uint32_t, Histogram>>& v, uint32_t sub) {
    for (auto& [k, h] : v) {
      if (k == sub) return h;
    }
    return v.emplace_back(sub, Histogram{}).second;
  }
};

}  // namespace perfhat::detail
