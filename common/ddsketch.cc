#include "common/ddsketch.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include "common/crc32.h"
#include "common/varint.h"

namespace perfhat {
namespace {

static_assert(std::endian::native == std::endian::little, "blob format assumes little-endian");

constexpr char kMagic[4] = {'D', 'D', 'S', '1'};

void putDouble(std::string& out, double v) {
  char b[8];
  std::memcpy(b, &v, 8);
  out.append(b, 8);
}
void putVarint(std::string& out, uint64_t v) { appendVarint(out, v); }

std::atomic<uint64_t> g_repaired{0};

// A blob read with clamped totals: counted, and logged (the first few, then every 1000th) so an
// operator learns that stored data held out-of-range values.
void noteRepair(const char* what) {
  const uint64_t n = g_repaired.fetch_add(1, std::memory_order_relaxed) + 1;
  if (n <= 10 || n % 1000 == 0) {
    std::fprintf(stderr,
                 "perfhat: stored sketch with out-of-range %s read with clamped totals (%llu so "
                 "far)\n",
                 what, static_cast<unsigned long long>(n));
  }
}

// Bounds-checked reader over the blob; every failure is a DDSketchError naming what was cut.
struct Reader {
  std::string_view s;
  size_t pos = 0;
  // Any double, also non-finite (totals are checked and repaired by the caller).
  double getRaw(const char* what) {
    if (s.size() - pos < 8) throw DDSketchError(std::string("ddsketch blob truncated at ") + what);
    double v;
    std::memcpy(&v, s.data() + pos, 8);
    pos += 8;
    return v;
  }
  double getDouble(const char* what) {
    const double v = getRaw(what);
    if (!std::isfinite(v)) throw DDSketchError(std::string("ddsketch blob: non-finite ") + what);
    return v;
  }
  uint64_t getVarint(const char* what) {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos >= s.size()) throw DDSketchError(std::string("ddsketch blob truncated at ") + what);
      auto b = static_cast<uint8_t>(s[pos++]);
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
    throw DDSketchError(std::string("ddsketch blob: overlong varint at ") + what);
  }
};

}  // namespace

uint64_t DDSketch::repairedBlobs() { return g_repaired.load(std::memory_order_relaxed); }

DDSketch::DDSketch(DDSketchOptions options) : options_(options) {
  if (!(options_.relative_accuracy > 0 && options_.relative_accuracy < 1)) {
    throw DDSketchError("ddsketch: relative accuracy must be in (0, 1)");
  }
  if (options_.max_bins < 16) throw DDSketchError("ddsketch: max_bins must be >= 16");
  gamma_ = (1 + options_.relative_accuracy) / (1 - options_.relative_accuracy);
  log_gamma_ = std::log(gamma_);
}

int DDSketch::index(double value) const {
  return static_cast<int>(std::ceil(std::log(value) / log_gamma_));
}
// Bin i holds (γ^(i-1), γ^i]; its midpoint in relative terms, 2γ^i/(γ+1), is within α of any
// value in the bin.
double DDSketch::valueAt(int i) const { return 2 * std::exp(i * log_gamma_) / (gamma_ + 1); }

// Makes bins_ cover [lo, hi] (hi - lo < max_bins): bins below lo fold into lo (collapsing).
void DDSketch::ensureRange(int lo, int hi) {
  if (bins_.empty()) {
    offset_ = lo;
    bins_.assign(static_cast<size_t>(hi - lo) + 1, 0.0);
    return;
  }
  int cur_hi = offset_ + static_cast<int>(bins_.size()) - 1;
  int new_lo = std::min(lo, offset_);
  int new_hi = std::max(hi, cur_hi);
  if (new_hi - new_lo + 1 > options_.max_bins) new_lo = new_hi - options_.max_bins + 1;
  if (new_lo == offset_ && new_hi == cur_hi) return;
  if (new_lo <= offset_) {
    // Growing without folding: in place, so a reused accumulator does not allocate.
    bins_.insert(bins_.begin(), static_cast<size_t>(offset_ - new_lo), 0.0);
    bins_.resize(static_cast<size_t>(new_hi - new_lo) + 1, 0.0);
    offset_ = new_lo;
    return;
  }
  std::vector<double> next(static_cast<size_t>(new_hi - new_lo) + 1, 0.0);
  for (size_t i = 0; i < bins_.size(); ++i) {
    int idx = std::max(offset_ + static_cast<int>(i), new_lo);
    next[static_cast<size_t>(idx - new_lo)] += bins_[i];
  }
  bins_ = std::move(next);
  offset_ = new_lo;
}

void DDSketch::add(double value, double weight) {
  if (!(weight > 0) || !std::isfinite(weight) || std::isnan(value)) return;
  if (value < 0) value = 0;  // durations and sizes cannot be negative: clock skew, clamp
  if (value > std::numeric_limits<double>::max()) value = std::numeric_limits<double>::max();
  weight = std::min(weight, kMaxCount - count_);  // saturated: only the room left
  if (!(weight > 0)) return;
  if (count_ <= 0) {
    min_ = max_ = value;
  } else {
    min_ = std::min(min_, value);
    max_ = std::max(max_, value);
  }
  count_ = std::min(count_ + weight, kMaxCount);
  sum_ = std::min(sum_ + value * weight, kMaxSum);  // value * weight may be +inf: min is kMaxSum
  if (value < kMinIndexable) {
    zero_count_ += weight;
    return;
  }
  int i = index(value);
  ensureRange(i, i);
  i = std::max(i, offset_);  // collapsed: lands in the lowest bin
  bins_[static_cast<size_t>(i - offset_)] += weight;
}

DDSketch DDSketch::fromBins(std::span<const std::pair<int, double>> bins, double zero_count,
                            double sum, DDSketchOptions options) {
  DDSketch s(options);
  if (!(zero_count >= 0) || !std::isfinite(zero_count)) {
    throw DDSketchError("ddsketch: zero count must be finite and >= 0");
  }
  if (!(sum >= 0) || !(sum <= kMaxSum)) {
    throw DDSketchError("ddsketch: sum must be finite and in [0, 1e300]");
  }
  int lo = 0, hi = 0;
  for (size_t k = 0; k < bins.size(); ++k) {
    const auto [i, c] = bins[k];
    // The bin of no finite value (|i| > ~35,000 at 1 %) could never come from add().
    const double v = s.valueAt(i);
    if (i < -100000 || i > 100000 || !std::isfinite(v) || v < kMinIndexable) {
      throw DDSketchError("ddsketch: bin index out of range");
    }
    if (!(c > 0) || !std::isfinite(c)) {
      throw DDSketchError("ddsketch: bin counts must be finite and > 0");
    }
    lo = k == 0 ? i : std::min(lo, i);
    hi = k == 0 ? i : std::max(hi, i);
  }
  if (!bins.empty()) {
    // Wider than max_bins: the lowest bins fold into one, as add() would have done.
    s.ensureRange(std::max(lo, hi - options.max_bins + 1), hi);
    for (const auto& [i, c] : bins) {
      s.bins_[static_cast<size_t>(std::max(i, s.offset_) - s.offset_)] += c;
      s.count_ += c;
    }
    s.min_ = s.valueAt(lo);
    s.max_ = s.valueAt(hi);
  }
  if (!(s.count_ + zero_count <= kMaxCount)) {
    throw DDSketchError("ddsketch: total count exceeds 1e18");
  }
  if (zero_count > 0) {
    s.zero_count_ = zero_count;
    s.count_ += zero_count;
    s.min_ = 0;
    if (bins.empty()) s.max_ = 0;
  }
  s.sum_ = sum;
  return s;
}

// A sketch's parameters and totals: a parsed blob's, or another sketch's for merge().
struct DDSketch::Parsed {
  DDSketchOptions options;
  double zero_count = 0, count = 0, sum = 0, min = 0, max = 0;
};

double DDSketch::mergeSummary(const Parsed& o) {
  if (o.count <= 0) return 0;
  if (std::abs(o.options.relative_accuracy - options_.relative_accuracy) > 1e-12) {
    throw DDSketchError("ddsketch: cannot merge sketches with different accuracies");
  }
  // Saturating: beyond kMaxCount, `o` counts only with the room left (its shape kept).
  const double room = kMaxCount - count_;
  const double f = o.count > room ? room / o.count : 1.0;
  if (!(f > 0)) return 0;
  if (count_ <= 0) {
    min_ = o.min;
    max_ = o.max;
  } else {
    min_ = std::min(min_, o.min);
    max_ = std::max(max_, o.max);
  }
  count_ = std::min(count_ + o.count * f, kMaxCount);
  sum_ = std::min(sum_ + o.sum * f, kMaxSum);
  zero_count_ += o.zero_count * f;
  return f;
}

void DDSketch::merge(const DDSketch& other) {
  const double f = mergeSummary(
      Parsed{other.options_, other.zero_count_, other.count_, other.sum_, other.min_, other.max_});
  if (f == 0 || other.bins_.empty()) return;
  int olo = other.offset_;
  int ohi = other.offset_ + static_cast<int>(other.bins_.size()) - 1;
  ensureRange(olo, ohi);
  for (size_t k = 0; k < other.bins_.size(); ++k) {
    if (other.bins_[k] == 0) continue;
    int i = std::max(olo + static_cast<int>(k), offset_);
    bins_[static_cast<size_t>(i - offset_)] += other.bins_[k] * f;
  }
}

double DDSketch::quantile(double q) const {
  if (count_ <= 0 || std::isnan(q)) return 0;
  q = std::clamp(q, 0.0, 1.0);
  double rank = q * (count_ - 1);
  double cum = zero_count_;
  double result = max_;
  if (cum > rank) {
    result = 0;
  } else {
    for (size_t k = 0; k < bins_.size(); ++k) {
      cum += bins_[k];
      if (cum > rank) {
        result = valueAt(offset_ + static_cast<int>(k));
        break;
      }
    }
  }
  return std::clamp(result, min_, max_);
}

void DDSketch::quantiles(std::span<const double> qs, double* out) const {
  // One walk over the cumulative counts; each answer is the one quantile() finds (the same
  // additions in the same order), so the results are identical.
  double cum = zero_count_;
  size_t k = 0;  // bins added to cum so far
  double prev_q = 0;
  for (size_t j = 0; j < qs.size(); ++j) {
    double q = qs[j];
    if (count_ <= 0 || std::isnan(q)) {
      out[j] = 0;
      continue;
    }
    q = std::clamp(q, 0.0, 1.0);
    if (q < prev_q) {  // not ascending: answer this one on its own
      out[j] = quantile(q);
      continue;
    }
    prev_q = q;
    const double rank = q * (count_ - 1);
    while (!(cum > rank) && k < bins_.size()) cum += bins_[k++];
    double result = max_;
    if (cum > rank) result = k == 0 ? 0 : valueAt(offset_ + static_cast<int>(k) - 1);
    out[j] = std::clamp(result, min_, max_);
  }
}

std::string DDSketch::serialize() const {
  std::string out(kMagic, 4);
  putDouble(out, options_.relative_accuracy);
  putVarint(out, static_cast<uint64_t>(options_.max_bins));
  putDouble(out, zero_count_);
  putDouble(out, count_);
  putDouble(out, sum_);
  putDouble(out, min_);
  putDouble(out, max_);
  size_t nonzero = 0;
  for (double c : bins_) nonzero += c > 0 ? 1 : 0;
  putVarint(out, nonzero);
  int prev = 0;
  bool first = true;
  for (size_t k = 0; k < bins_.size(); ++k) {
    double c = bins_[k];
    if (c <= 0) continue;
    int idx = offset_ + static_cast<int>(k);
    if (first) {
      // zigzag: the first index may be negative (values below 1 ns)
      putVarint(out, (static_cast<uint64_t>(idx) << 1) ^ static_cast<uint64_t>(idx >> 31));
      first = false;
    } else {
      putVarint(out, static_cast<uint64_t>(idx - prev));
    }
    prev = idx;
    // Unweighted data has integral counts: a varint (low bit 0). Weighted: tag 1 + raw double.
    if (c == std::floor(c) && c < 9.0e15) {
      putVarint(out, static_cast<uint64_t>(c) << 1);
    } else {
      putVarint(out, 1);
      putDouble(out, c);
    }
  }
  const uint32_t crc = crc32(out);
  for (int b = 0; b < 4; ++b) out.push_back(static_cast<char>((crc >> (8 * b)) & 0xff));
  return out;
}

DDSketch::Parsed DDSketch::parse(std::string_view blob, std::vector<std::pair<int, double>>& bins) {
  if (blob.size() < 4 + 4 || std::memcmp(blob.data(), kMagic, 4) != 0) {
    throw DDSketchError("ddsketch blob: bad magic or too short");
  }
  std::string_view body = blob.substr(0, blob.size() - 4);
  const uint32_t crc = crc32(body);
  uint32_t stored = 0;
  for (int b = 0; b < 4; ++b) {
    stored |= static_cast<uint32_t>(static_cast<uint8_t>(blob[body.size() + b])) << (8 * b);
  }
  if (stored != crc) throw DDSketchError("ddsketch blob: checksum mismatch");

  Reader r{body, 4};
  Parsed p;
  p.options.relative_accuracy = r.getDouble("accuracy");
  uint64_t max_bins = r.getVarint("max_bins");
  if (!(p.options.relative_accuracy > 0 && p.options.relative_accuracy < 1) || max_bins < 16 ||
      max_bins > (1u << 20)) {
    throw DDSketchError("ddsketch blob: invalid parameters");
  }
  p.options.max_bins = static_cast<int>(max_bins);
  // Totals are read as they are and checked below, after the bins: a blob that passed its CRC
  // was written by a sketch, so totals out of range are repaired rather than refused.
  p.zero_count = r.getRaw("zero count");
  p.count = r.getRaw("count");
  p.sum = r.getRaw("sum");
  p.min = r.getRaw("min");
  p.max = r.getRaw("max");
  if (p.zero_count < 0 || p.count < 0) throw DDSketchError("ddsketch blob: negative count");
  uint64_t nonzero = r.getVarint("bin count");
  if (nonzero > max_bins) throw DDSketchError("ddsketch blob: too many bins");
  bins.clear();
  bins.reserve(nonzero);
  int64_t prev = 0;
  for (uint64_t n = 0; n < nonzero; ++n) {
    uint64_t raw = r.getVarint("bin index");
    int64_t idx;
    if (n == 0) {
      idx = static_cast<int64_t>(raw >> 1) ^ -static_cast<int64_t>(raw & 1);
    } else {
      if (raw == 0 || raw > max_bins) throw DDSketchError("ddsketch blob: bins out of order");
      idx = prev + static_cast<int64_t>(raw);
    }
    if (idx < -100000 || idx > 100000) throw DDSketchError("ddsketch blob: bin index out of range");
    prev = idx;
    uint64_t tag = r.getVarint("bin count");
    double c = (tag & 1) ? r.getRaw("bin count") : static_cast<double>(tag >> 1);
    if (!(c > 0)) throw DDSketchError("ddsketch blob: non-positive bin count");
    bins.emplace_back(static_cast<int>(idx), c);
  }
  if (r.pos != body.size()) throw DDSketchError("ddsketch blob: trailing bytes");
  if (!bins.empty() &&
      int64_t{bins.back().first} - bins.front().first + 1 > static_cast<int64_t>(max_bins)) {
    throw DDSketchError("ddsketch blob: bins span more than max_bins");
  }
  repairTotals(p, bins);
  return p;
}

// Clamps what a blob that checks may still hold out of range (written before sketches bounded
// their totals, e.g. a weight of 1e308 made the sum infinite): counts beyond kMaxCount, a count
// that is not the bins' total, a sum that is not finite, min/max that are not finite or in order.
// What can be recomputed from the bins is; the repair is counted and logged.
void DDSketch::repairTotals(Parsed& p, std::vector<std::pair<int, double>>& bins) {
  const char* repaired = nullptr;
  auto fix = [&](const char* what) {
    if (!repaired) repaired = what;
  };
  if (std::isnan(p.zero_count)) {
    p.zero_count = 0;
    fix("zero count");
  }
  double total = std::min(p.zero_count, kMaxCount);
  if (total != p.zero_count) fix("zero count");
  for (auto& b : bins) {
    if (b.second > kMaxCount) {
      b.second = kMaxCount;
      fix("bin count");
    }
    total += b.second;  // summed in bin order, as the dense bins were before this refactoring
  }
  p.zero_count = std::min(p.zero_count, kMaxCount);
  if (total > kMaxCount) {  // scaled down to kMaxCount, keeping the shape
    const double f = kMaxCount / total;
    p.zero_count *= f;
    total = p.zero_count;
    for (auto& b : bins) total += b.second *= f;
    fix("count");
  }
  if (!(std::abs(total - p.count) <= 1e-6 * std::max(1.0, total))) {
    p.count = total;
    fix("count");
  }
  if (p.count <= 0) return;
  // Only when a total needs recomputing (the usual blob reads without a log()).
  auto value = [&](int i) {
    const double gamma = (1 + p.options.relative_accuracy) / (1 - p.options.relative_accuracy);
    return std::min(2 * std::exp(i * std::log(gamma)) / (gamma + 1),
                    std::numeric_limits<double>::max());
  };
  if (!(p.min >= 0 && p.min <= p.max && p.max <= std::numeric_limits<double>::max())) {
    p.min = p.zero_count > 0 || bins.empty() ? 0 : value(bins.front().first);
    p.max = bins.empty() ? 0 : value(bins.back().first);
    fix("min/max");
  }
  if (!(p.sum >= 0 && p.sum <= kMaxSum)) {
    double sum = 0;  // estimated from the bins (each value within the accuracy)
    for (const auto& [i, c] : bins) sum = std::min(sum + value(i) * c, kMaxSum);
    p.sum = sum;
    fix("sum");
  }
  if (repaired) noteRepair(repaired);
}

DDSketch DDSketch::deserialize(std::string_view blob) {
  DDSketch s;
  s.assignSerialized(blob);
  return s;
}

void DDSketch::assignSerialized(std::string_view blob) {
  thread_local std::vector<std::pair<int, double>> bins;
  const Parsed p = parse(blob, bins);
  if (p.options.relative_accuracy != options_.relative_accuracy) {
    gamma_ = (1 + p.options.relative_accuracy) / (1 - p.options.relative_accuracy);
    log_gamma_ = std::log(gamma_);
  }
  options_ = p.options;
  zero_count_ = p.zero_count;
  count_ = p.count;
  sum_ = p.sum;
  min_ = p.min;
  max_ = p.max;
  bins_.clear();
  offset_ = 0;
  if (!bins.empty()) {
    offset_ = bins.front().first;
    bins_.assign(static_cast<size_t>(bins.back().first - bins.front().first) + 1, 0.0);
    for (const auto& [idx, c] : bins) bins_[static_cast<size_t>(idx - offset_)] = c;
  }
}

// merge() with `other` = the parsed blob: the same summary merge and the same order of bin
// additions, so the result is bit-identical to merge(deserialize(blob)).
void DDSketch::mergeSerialized(std::string_view blob) {
  thread_local std::vector<std::pair<int, double>> bins;
  const Parsed p = parse(blob, bins);
  const double f = mergeSummary(p);
  if (f == 0 || bins.empty()) return;
  ensureRange(bins.front().first, bins.back().first);
  for (const auto& [idx, c] : bins) {
    int i = std::max(idx, offset_);
    bins_[static_cast<size_t>(i - offset_)] += c * f;
  }
}

void DDSketch::clear() {
  bins_.clear();
  offset_ = 0;
  zero_count_ = count_ = sum_ = min_ = max_ = 0;
}

bool DDSketch::operator==(const DDSketch& o) const {
  if (count_ != o.count_ || zero_count_ != o.zero_count_ || sum_ != o.sum_ || min() != o.min() ||
      max() != o.max() || options_.relative_accuracy != o.options_.relative_accuracy) {
    return false;
  }
  // Compare bin contents independent of allocation (trailing/leading zero bins).
  auto nz = [](const DDSketch& s) {
    std::vector<std::pair<int, double>> v;
    for (size_t k = 0; k < s.bins_.size(); ++k) {
      if (s.bins_[k] != 0) v.emplace_back(s.offset_ + static_cast<int>(k), s.bins_[k]);
    }
    return v;
  };
  return nz(*this) == nz(o);
}

}  // namespace perfhat
