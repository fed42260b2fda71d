#include "common/ddsketch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <vector>

#include "common/crc32.h"

namespace perfhat {
namespace {

// The exact quantile with the same rank convention as the sketch (lower of rank q·(n−1)).
double exactQuantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  auto rank = static_cast<size_t>(std::floor(q * static_cast<double>(v.size() - 1)));
  return v[rank];
}

void expectWithinAccuracy(const DDSketch& s, const std::vector<double>& values, double alpha) {
  for (double q : {0.0, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 1.0}) {
    double exact = exactQuantile(values, q);
    double est = s.quantile(q);
    EXPECT_LE(std::abs(est - exact), alpha * exact + 1e-12) << "q=" << q << " exact=" << exact;
  }
}

TEST(DDSketch, RelativeErrorWithinOnePercentOnLognormalLatencies) {
  std::mt19937_64 rng(42);
  std::lognormal_distribution<double> dist(std::log(2e6), 1.2);  // ~2 ms median, long tail
  DDSketch s;
  std::vector<double> values;
  for (int i = 0; i < 50000; ++i) {
    double v = dist(rng);
    values.push_back(v);
    s.add(v);
  }
  EXPECT_DOUBLE_EQ(s.count(), 50000);
  expectWithinAccuracy(s, values, 0.01);
  EXPECT_DOUBLE_EQ(s.min(), *std::min_element(values.begin(), values.end()));
  EXPECT_DOUBLE_EQ(s.max(), *std::max_element(values.begin(), values.end()));
}

TEST(DDSketch, RelativeErrorOnUniformAndPareto) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> uni(1e3, 1e9);
  DDSketch a;
  std::vector<double> va;
  for (int i = 0; i < 20000; ++i) {
    double v = uni(rng);
    va.push_back(v);
    a.add(v);
  }
  expectWithinAccuracy(a, va, 0.01);

  std::exponential_distribution<double> ex(1.0);
  DDSketch b;
  std::vector<double> vb;
  for (int i = 0; i < 20000; ++i) {
    double v = 1e4 * std::exp(ex(rng));  // Pareto(1)
    vb.push_back(v);
    b.add(v);
  }
  expectWithinAccuracy(b, vb, 0.01);
}

TEST(DDSketch, MergeEqualsSketchOfUnion) {
  std::mt19937_64 rng(1);
  std::lognormal_distribution<double> d1(10, 1), d2(14, 0.5);
  DDSketch a, b, all;
  std::vector<double> values;
  for (int i = 0; i < 5000; ++i) {
    double x = d1(rng), y = d2(rng);
    a.add(x);
    b.add(y);
    all.add(x);
    all.add(y);
    values.push_back(x);
    values.push_back(y);
  }
  DDSketch merged = a;
  merged.merge(b);
  EXPECT_DOUBLE_EQ(merged.count(), all.count());
  for (double q : {0.1, 0.5, 0.9, 0.99}) EXPECT_DOUBLE_EQ(merged.quantile(q), all.quantile(q));
  EXPECT_DOUBLE_EQ(merged.min(), all.min());
  EXPECT_DOUBLE_EQ(merged.max(), all.max());
  EXPECT_NEAR(merged.sum(), all.sum(), 1e-6 * all.sum());
  expectWithinAccuracy(merged, values, 0.01);
  // Merging into an empty sketch copies.
  DDSketch empty;
  empty.merge(a);
  EXPECT_EQ(empty, a);
}

TEST(DDSketch, MergeRejectsDifferentAccuracy) {
  DDSketch a, b(DDSketchOptions{.relative_accuracy = 0.02});
  a.add(1);
  b.add(2);
  EXPECT_THROW(a.merge(b), DDSketchError);
}

TEST(DDSketch, WeightsCountAsRepeatedValues) {
  DDSketch weighted, repeated;
  weighted.add(100, 10);
  weighted.add(1000, 1);
  for (int i = 0; i < 10; ++i) repeated.add(100);
  repeated.add(1000);
  EXPECT_DOUBLE_EQ(weighted.count(), 11);
  EXPECT_DOUBLE_EQ(weighted.quantile(0.5), repeated.quantile(0.5));
  EXPECT_DOUBLE_EQ(weighted.sum(), repeated.sum());
  weighted.add(5, 0);   // ignored
  weighted.add(5, -1);  // ignored
  EXPECT_DOUBLE_EQ(weighted.count(), 11);
}

TEST(DDSketch, ZeroAndNegativeValuesGoToTheZeroBucket) {
  DDSketch s;
  s.add(0);
  s.add(-5);
  s.add(100);
  EXPECT_DOUBLE_EQ(s.count(), 3);
  EXPECT_DOUBLE_EQ(s.quantile(0), 0);
  EXPECT_DOUBLE_EQ(s.quantile(0.5), 0);
  EXPECT_NEAR(s.quantile(1), 100, 1);
}

TEST(DDSketch, EmptySketch) {
  DDSketch s;
  EXPECT_TRUE(s.empty());
  EXPECT_DOUBLE_EQ(s.quantile(0.5), 0);
  DDSketch r = DDSketch::deserialize(s.serialize());
  EXPECT_EQ(r, s);
}

TEST(DDSketch, CollapsingBoundsMemoryAndKeepsHighQuantiles) {
  DDSketch s(DDSketchOptions{.relative_accuracy = 0.01, .max_bins = 64});
  std::vector<double> values;
  for (int e = 0; e < 2000; ++e) {
    double v = std::pow(1.02, e);  // spans ~17 decades: far more than 64 bins
    s.add(v);
    values.push_back(v);
  }
  EXPECT_LE(s.binCount(), 64u);
  EXPECT_DOUBLE_EQ(s.count(), 2000);
  for (double q : {0.99, 0.999}) {
    double exact = exactQuantile(values, q);
    EXPECT_LE(std::abs(s.quantile(q) - exact), 0.01 * exact);
  }
}

TEST(DDSketch, SerializeRoundTrip) {
  std::mt19937_64 rng(3);
  std::lognormal_distribution<double> d(12, 2);
  DDSketch s;
  for (int i = 0; i < 3000; ++i) s.add(d(rng), i % 7 == 0 ? 2.5 : 1.0);
  s.add(0);
  std::string blob = s.serialize();
  DDSketch r = DDSketch::deserialize(blob);
  EXPECT_EQ(r, s);
  EXPECT_DOUBLE_EQ(r.quantile(0.99), s.quantile(0.99));
  // Compact: a few bytes per occupied bin, far less than 8 bytes per value.
  EXPECT_LT(blob.size(), 3000u);
}

TEST(DDSketch, CorruptBlobsAreRejected) {
  DDSketch s;
  for (int i = 1; i < 100; ++i) s.add(i * 1000.0);
  std::string blob = s.serialize();
  EXPECT_THROW(DDSketch::deserialize(""), DDSketchError);
  EXPECT_THROW(DDSketch::deserialize("garbage"), DDSketchError);
  EXPECT_THROW(DDSketch::deserialize(blob.substr(0, blob.size() / 2)), DDSketchError);
  EXPECT_THROW(DDSketch::deserialize(blob + "x"), DDSketchError);
  for (size_t i = 0; i < blob.size(); ++i) {
    std::string bad = blob;
    bad[i] = static_cast<char>(bad[i] ^ 0x5a);
    EXPECT_THROW(DDSketch::deserialize(bad), DDSketchError) << "flipped byte " << i;
  }
}

// Sketches whose bins overlap partly, extend below and above each other, carry weights, zero
// values, and (the last one) force collapsing in a small sketch.
std::vector<DDSketch> mergeInputs(DDSketchOptions opt) {
  std::mt19937_64 rng(11);
  std::vector<DDSketch> v;
  for (int s = 0; s < 6; ++s) {
    std::lognormal_distribution<double> d(8 + 2.0 * s, 1.0 + 0.3 * s);
    DDSketch k(opt);
    for (int i = 0; i < 200; ++i) k.add(d(rng), i % 5 == 0 ? 0.1 : 1.0);
    if (s == 2) k.add(0, 3);
    v.push_back(k);
  }
  DDSketch wide(opt);
  double x = 1e-3;
  for (int i = 0; i < 86; ++i, x *= 1.5) wide.add(x);  // 1e-3 .. 9.2e11
  v.push_back(wide);
  return v;
}

void expectIdentical(const DDSketch& a, const DDSketch& b) {
  EXPECT_EQ(a, b);
  // operator== compares exactly; also the derived numbers, bit for bit.
  EXPECT_EQ(a.sum(), b.sum());
  EXPECT_EQ(a.count(), b.count());
  for (double q : {0.0, 0.5, 0.9, 0.99, 1.0}) EXPECT_EQ(a.quantile(q), b.quantile(q)) << q;
}

TEST(DDSketch, MergeSerializedEqualsMergeOfDeserialized) {
  for (DDSketchOptions opt : {DDSketchOptions{}, DDSketchOptions{0.02, 64}}) {
    std::vector<DDSketch> in = mergeInputs(opt);
    DDSketch want(opt), got(opt);
    for (const DDSketch& k : in) {
      const std::string blob = k.serialize();
      want.merge(DDSketch::deserialize(blob));
      got.mergeSerialized(blob);
      expectIdentical(got, want);
    }
    EXPECT_LE(got.binCount(), static_cast<size_t>(opt.max_bins));
  }
}

TEST(DDSketch, AssignSerializedReusesAndEqualsDeserialize) {
  std::vector<DDSketch> in = mergeInputs({});
  DDSketch acc;
  for (const DDSketch& k : in) {
    const std::string blob = k.serialize();
    acc.assignSerialized(blob);
    expectIdentical(acc, DDSketch::deserialize(blob));
  }
  // Parameters come from the blob, as with deserialize.
  DDSketch coarse({0.05, 32});
  coarse.add(1234);
  acc.assignSerialized(coarse.serialize());
  EXPECT_DOUBLE_EQ(acc.relativeAccuracy(), 0.05);
  EXPECT_THROW(acc.mergeSerialized(in[0].serialize()), DDSketchError);
  acc.clear();
  EXPECT_TRUE(acc.empty());
  EXPECT_EQ(acc.quantile(0.5), 0);
}

TEST(DDSketch, MergeSerializedLeavesSketchUnchangedOnBadInput) {
  DDSketch s;
  for (int i = 1; i < 50; ++i) s.add(i * 100.0);
  const DDSketch before = s;
  DDSketch other;
  for (int i = 1; i < 50; ++i) other.add(i * 1e6);
  std::string blob = other.serialize();
  blob[blob.size() / 2] ^= 0x21;
  EXPECT_THROW(s.mergeSerialized(blob), DDSketchError);
  EXPECT_THROW(s.mergeSerialized("DDS1"), DDSketchError);
  DDSketch other_accuracy({0.02, 2048});
  other_accuracy.add(5);
  EXPECT_THROW(s.mergeSerialized(other_accuracy.serialize()), DDSketchError);
  expectIdentical(s, before);
  EXPECT_THROW(s.assignSerialized(blob), DDSketchError);
  expectIdentical(s, before);
}

TEST(DDSketch, QuantilesEqualsQuantileOneByOne) {
  std::vector<DDSketch> in = mergeInputs({});
  in.push_back(DDSketch());  // empty
  DDSketch zeros;
  zeros.add(0, 5);
  zeros.add(10);
  in.push_back(zeros);
  const std::vector<double> qs = {-1, 0, 0.1, 0.5, 0.5, 0.9, 0.95, 0.99, 1, 2, 0.3, NAN, 0.7};
  for (const DDSketch& k : in) {
    std::vector<double> out(qs.size(), -42);
    k.quantiles(qs, out.data());
    for (size_t i = 0; i < qs.size(); ++i) EXPECT_EQ(out[i], k.quantile(qs[i])) << "q=" << qs[i];
  }
}

}  // namespace
}  // namespace perfhat

// Pre-binned data (libperfhat's aggregate export) gives the sketch add() would have built.
TEST(DDSketch, FromBinsEqualsTheSketchOfTheSameValues) {
  const double log_gamma = std::log((1 + 0.01) / (1 - 0.01));
  std::mt19937_64 rng(3);
  std::lognormal_distribution<double> ln(10, 1.5);
  perfhat::DDSketch direct;
  std::map<int, double> bins;
  double sum = 0, zero = 0;
  for (int k = 0; k < 5000; ++k) {
    const double v = k % 100 == 0 ? 0 : ln(rng);
    const double w = k % 3 == 0 ? 2.0 : 1.0;
    direct.add(v, w);
    sum += v * w;
    if (v < perfhat::DDSketch::kMinIndexable) {
      zero += w;
    } else {
      bins[static_cast<int>(std::ceil(std::log(v) / log_gamma))] += w;
    }
  }
  std::vector<std::pair<int, double>> list(bins.begin(), bins.end());
  auto built = perfhat::DDSketch::fromBins(list, zero, sum);
  EXPECT_EQ(built.count(), direct.count());
  EXPECT_DOUBLE_EQ(built.sum(), direct.sum());
  EXPECT_EQ(built.min(), 0);
  EXPECT_NEAR(built.max(), direct.max(), 0.01 * direct.max());
  for (double q : {0.01, 0.25, 0.5, 0.9, 0.99}) {
    // Same bins, same answer (clamped to min/max, which come from the bins here).
    EXPECT_NEAR(built.quantile(q), direct.quantile(q), 1e-9 * direct.quantile(q)) << q;
  }
  // And it merges like any other sketch.
  perfhat::DDSketch merged = direct;
  merged.merge(built);
  EXPECT_EQ(merged.count(), 2 * direct.count());
}

TEST(DDSketch, FromBinsRejectsWhatNoSketchCouldHold) {
  using Bins = std::vector<std::pair<int, double>>;
  EXPECT_THROW(perfhat::DDSketch::fromBins(Bins{{100001, 1}}, 0, 1), perfhat::DDSketchError);
  EXPECT_THROW(perfhat::DDSketch::fromBins(Bins{{84546, 1}}, 0, 1), perfhat::DDSketchError);
  EXPECT_THROW(perfhat::DDSketch::fromBins(Bins{{-5000, 1}}, 0, 1), perfhat::DDSketchError);
  EXPECT_THROW(perfhat::DDSketch::fromBins(Bins{{5, 1e308}, {6, 1e308}}, 0, 1),
               perfhat::DDSketchError);
  EXPECT_THROW(perfhat::DDSketch::fromBins(Bins{{5, 0}}, 0, 1), perfhat::DDSketchError);
  EXPECT_THROW(perfhat::DDSketch::fromBins(Bins{{5, -1}}, 0, 1), perfhat::DDSketchError);
  EXPECT_THROW(perfhat::DDSketch::fromBins(Bins{{5, NAN}}, 0, 1), perfhat::DDSketchError);
  EXPECT_THROW(perfhat::DDSketch::fromBins(Bins{{5, 1}}, -1, 1), perfhat::DDSketchError);
  EXPECT_THROW(perfhat::DDSketch::fromBins(Bins{{5, 1}}, 0, INFINITY), perfhat::DDSketchError);
  EXPECT_THROW(perfhat::DDSketch::fromBins(Bins{{5, 1}}, 0, -3), perfhat::DDSketchError);
  // Only zeros: min = max = 0.
  auto z = perfhat::DDSketch::fromBins(Bins{}, 4, 0);
  EXPECT_EQ(z.count(), 4);
  EXPECT_EQ(z.max(), 0);
  // Wider than max_bins: the lowest bins fold, the count stays.
  auto wide = perfhat::DDSketch::fromBins(Bins{{0, 1}, {5000, 1}}, 0, 10);
  EXPECT_EQ(wide.count(), 2);
  EXPECT_LE(wide.binCount(), 2048u);
}

namespace perfhat {
namespace {

// A blob as serialize() lays it out (ddsketch.cc), with totals chosen by the test: what a sketch
// wrote before its totals were bounded (a weight of 1e308 made the sum infinite).
std::string blobWithTotals(double zero, double count, double sum, double min, double max,
                           const std::vector<std::pair<int, double>>& bins) {
  std::string out = "DDS1";
  auto putDouble = [&](double v) { out.append(reinterpret_cast<const char*>(&v), 8); };
  auto putVarint = [&](uint64_t v) {
    while (v >= 0x80) {
      out.push_back(static_cast<char>((v & 0x7f) | 0x80));
      v >>= 7;
    }
    out.push_back(static_cast<char>(v));
  };
  putDouble(0.01);
  putVarint(2048);
  for (double v : {zero, count, sum, min, max}) putDouble(v);
  putVarint(bins.size());
  int prev = 0;
  for (size_t k = 0; k < bins.size(); ++k) {
    const int idx = bins[k].first;
    putVarint(k == 0 ? (static_cast<uint64_t>(idx) << 1) ^ static_cast<uint64_t>(idx >> 31)
                     : static_cast<uint64_t>(idx - prev));
    prev = idx;
    putVarint(1);  // a raw double count
    putDouble(bins[k].second);
  }
  const uint32_t crc = crc32(out);
  out.append(reinterpret_cast<const char*>(&crc), 4);
  return out;
}

TEST(DDSketch, HugeWeightsSaturateTheCountAndKeepEveryTotalFinite) {
  for (double weight : {1e19, 1e100, 1e308, std::numeric_limits<double>::max()}) {
    DDSketch s;
    s.add(1e6, 3);
    s.add(2e6, weight);
    s.add(1e308, weight);
    EXPECT_EQ(s.count(), DDSketch::kMaxCount) << weight;
    EXPECT_TRUE(std::isfinite(s.sum()) && s.sum() <= DDSketch::kMaxSum) << weight;
    EXPECT_TRUE(std::isfinite(s.mean())) << weight;
    const DDSketch back = DDSketch::deserialize(s.serialize());  // threw "non-finite sum"
    EXPECT_EQ(back, s) << weight;
  }
  // Merging many saturated sketches stays saturated, finite and readable.
  DDSketch big;
  big.add(5e9, 9e17);
  DDSketch acc;
  for (int i = 0; i < 50; ++i) acc.merge(big);
  EXPECT_EQ(acc.count(), DDSketch::kMaxCount);
  EXPECT_TRUE(std::isfinite(acc.sum()));
  EXPECT_NEAR(acc.mean(), 5e9, 0.01 * 5e9);
  DDSketch again;
  for (int i = 0; i < 50; ++i) again.mergeSerialized(big.serialize());
  EXPECT_EQ(again.count(), DDSketch::kMaxCount);
  EXPECT_NO_THROW(DDSketch::deserialize(again.serialize()));
  // Below saturation nothing changes: merge stays exact.
  DDSketch a, b;
  a.add(10, 2);
  b.add(20, 3);
  a.merge(b);
  EXPECT_EQ(a.count(), 5);
  EXPECT_EQ(a.sum(), 80);
}

TEST(DDSketch, AStoredBlobWithOutOfRangeTotalsReadsClampedAndIsCounted) {
  const uint64_t before = DDSketch::repairedBlobs();
  const double inf = std::numeric_limits<double>::infinity();
  // What weight 1e308 on two spans left: bins of 1e308, count 2e308 = inf, sum inf.
  const std::string blob = blobWithTotals(0, inf, inf, 1e6, 2e6, {{691, 1e308}, {726, 1e308}});
  DDSketch s;
  ASSERT_NO_THROW(s = DDSketch::deserialize(blob));
  EXPECT_EQ(s.count(), DDSketch::kMaxCount);
  EXPECT_TRUE(std::isfinite(s.sum()) && s.sum() > 0);
  EXPECT_NEAR(s.mean(), 1.5e6, 0.02 * 1.5e6);  // the sum, estimated from the bins
  EXPECT_NEAR(s.quantile(0.99), 2e6, 0.02 * 2e6);
  EXPECT_EQ(DDSketch::repairedBlobs(), before + 1);
  // It merges (a later write adds to it instead of replacing it), and the result is in range.
  DDSketch acc;
  acc.add(1e6);
  acc.mergeSerialized(blob);
  EXPECT_EQ(acc.count(), DDSketch::kMaxCount);
  EXPECT_NO_THROW(DDSketch::deserialize(acc.serialize()));
  // NaN totals, min above max, counts that do not add up: recomputed from the bins.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  DDSketch t = DDSketch::deserialize(blobWithTotals(nan, 7, nan, 9e9, 1, {{100, 2}, {200, 3}}));
  EXPECT_EQ(t.count(), 5);
  EXPECT_LE(t.min(), t.max());
  EXPECT_TRUE(std::isfinite(t.sum()));
  // Structural damage is still refused.
  EXPECT_THROW(DDSketch::deserialize(blobWithTotals(0, -1, 1, 1, 1, {{100, 1}})), DDSketchError);
  EXPECT_THROW(DDSketch::deserialize(blobWithTotals(0, 1, 1, 1, 1, {{100, -1}})), DDSketchError);
}

TEST(DDSketch, FromBinsRefusesTotalsBeyondTheBounds) {
  using Bins = std::vector<std::pair<int, double>>;
  EXPECT_THROW(DDSketch::fromBins(Bins{{5, 2e18}}, 0, 1), DDSketchError);
  EXPECT_THROW(DDSketch::fromBins(Bins{{5, 6e17}, {6, 6e17}}, 0, 1), DDSketchError);
  EXPECT_THROW(DDSketch::fromBins(Bins{{5, 1}}, 0, 1e301), DDSketchError);
  EXPECT_NO_THROW(DDSketch::fromBins(Bins{{5, 1e18}}, 0, 1e300));
}

}  // namespace
}  // namespace perfhat
