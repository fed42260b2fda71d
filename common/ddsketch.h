// DDSketch (Masson, Rim, Lee, PVLDB 2019): a quantile sketch with a relative-error guarantee.
//
// Every quantile it returns is within `relative_accuracy` (default 1 %) of the exact quantile's
// value, and two sketches merge exactly (bins are summed), which is what lets handlers combine
// latencies across threads, hosts, minutes and upstreams (DESIGN §4).
//
// Values are durations (ns) or sizes, so only non-negative values are meaningful: values below
// `kMinIndexable` (including 0 and negatives, which are clamped) go to a zero bucket. Counts are
// doubles because spans carry sampling weights (a span sampled at 10 % counts 10).
//
// Memory is bounded: at most `max_bins` contiguous bins; beyond that the lowest bins collapse
// into one (the high quantiles, which matter for latency, keep their guarantee).
//
// Totals are bounded too, so every sketch serializes to a blob that reads back: the weighted
// count saturates at kMaxCount (an add or merge beyond it is scaled down to the room left, keeping
// the distribution's shape) and the sum at kMaxSum. A span with sampling weight 1e308 used to make
// the sum infinite, and the stored row unreadable. A stored blob whose totals are out of range
// anyway (written before these bounds) reads clamped and is counted (repairedBlobs()).
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace perfhat {

class DDSketchError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct DDSketchOptions {
  double relative_accuracy = 0.01;  // α: |estimate − exact| ≤ α · exact
  int max_bins = 2048;  // α = 1 % with 2048 bins covers ~80 µs..1 year at full accuracy
};

class DDSketch {
 public:
  static constexpr double kMinIndexable = 1e-9;
  // Largest weighted count of one sketch: exact in a double, in int64 and uint64, and far above
  // any real count (10^6 calls per second for 30 years is 2.6 * 10^15).
  static constexpr double kMaxCount = 1e18;
  // Largest weighted sum: any value times kMaxCount stays finite below it.
  static constexpr double kMaxSum = 1e300;
  // Blobs read (deserialize, assignSerialized, mergeSerialized) whose totals were out of range
  // and were clamped, process-wide (for metrics).
  static uint64_t repairedBlobs();

  explicit DDSketch(DDSketchOptions options = {});

  // Adds `value` with weight `weight` (> 0; non-finite or non-positive weights are ignored).
  // A weight beyond the room left below kMaxCount is cut to that room.
  void add(double value, double weight = 1.0);
  // Exact merge: the result equals the sketch of the union of both inputs (unless the count
  // saturates: then `other` is scaled down to the room left). Throws DDSketchError when the
  // relative accuracies differ (bins would not line up).
  void merge(const DDSketch& other);

  // Same result as merge(deserialize(blob)) without building the intermediate sketch (reads
  // that combine many stored rows, e.g. batchGet). Throws DDSketchError, leaving this sketch
  // unchanged, when the blob is corrupt or its accuracy differs.
  void mergeSerialized(std::string_view blob);
  // Same result as `*this = deserialize(blob)`, reusing this sketch's bin storage. Throws
  // DDSketchError on a corrupt blob (this sketch is then unchanged).
  void assignSerialized(std::string_view blob);
  // Empty again, keeping options and bin storage (for accumulators reused across keys).
  void clear();

  // A sketch from pre-binned data (libperfhat's aggregate export, docs/aggregate-export.md):
  // `bins` are (index, weighted count) pairs in this sketch's binning (index ceil(ln v / ln γ)),
  // `zero_count` the weight of values without an index, `sum` the exact weighted sum. Min and
  // max are the representative values of the extreme bins (0 when the zero count is the lowest).
  // Throws DDSketchError for the index of no finite value >= kMinIndexable (about [-1036, 35488]
  // at 1 %), a count that is not finite and > 0 (a zero count not finite and >= 0), a total that
  // exceeds kMaxCount, or a sum that is not finite and in [0, kMaxSum].
  static DDSketch fromBins(std::span<const std::pair<int, double>> bins, double zero_count,
                           double sum, DDSketchOptions options = {});

  // q in [0, 1]; returns 0 for an empty sketch. Clamped to [min, max] of the inputs.
  double quantile(double q) const;
  // out[i] = quantile(qs[i]) for all i, in one pass over the bins when qs is ascending.
  void quantiles(std::span<const double> qs, double* out) const;

  double count() const { return count_; }
  double sum() const { return sum_; }
  double min() const { return count_ > 0 ? min_ : 0; }
  double max() const { return count_ > 0 ? max_ : 0; }
  double mean() const { return count_ > 0 ? sum_ / count_ : 0; }
  bool empty() const { return count_ <= 0; }
  double relativeAccuracy() const { return options_.relative_accuracy; }
  // Number of allocated bins (for memory accounting).
  size_t binCount() const { return bins_.size(); }

  // Compact binary form for the store: magic, accuracy, totals, sparse varint-coded bins, CRC32.
  std::string serialize() const;
  // Throws DDSketchError on a truncated or corrupt blob (bad magic, checksum, structure). Totals
  // out of range in a blob that checks (infinite sum, counts beyond kMaxCount, counts that do not
  // add up, min above max) are clamped or recomputed from the bins, and counted in
  // repairedBlobs(): a stored row stays readable.
  static DDSketch deserialize(std::string_view blob);

  bool operator==(const DDSketch& other) const;

 private:
  struct Parsed;
  // Checks a blob completely (magic, CRC, parameters, bins, totals); bins go to `bins`.
  static Parsed parse(std::string_view blob, std::vector<std::pair<int, double>>& bins);
  static void repairTotals(Parsed& p, std::vector<std::pair<int, double>>& bins);

  int index(double value) const;
  double valueAt(int index) const;
  void ensureRange(int lo, int hi);
  // Merges another sketch's totals and min/max (checking the accuracy); returns the factor its
  // bins are to be added with (1, or less when the count saturates), 0 when nothing merges.
  double mergeSummary(const Parsed& other);
  void collapseIfNeeded();

  DDSketchOptions options_;
  double gamma_;
  double log_gamma_;
  std::vector<double> bins_;  // bins_[i] counts index offset_ + i
  int offset_ = 0;
  double zero_count_ = 0;
  double count_ = 0;
  double sum_ = 0;
  double min_ = 0;
  double max_ = 0;
};

}  // namespace perfhat
