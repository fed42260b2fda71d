// What a batchGet accumulates while the rows of one key stream by: the read window, a
// distribution over rows (Acc), all of one key's distributions (KeyAcc), and how stored values
// read back (counts clamped, durations in whole nanoseconds).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/ddsketch.h"
#include "common/feedback.h"
#include "feedback-handler/store/batch.h"

namespace perfhat::handler::store_detail {

inline int64_t floorDiv(int64_t a, int64_t b) {
  return a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
}

struct Window {
  int64_t from_ns = 0, to_ns = 0;
  int64_t first_bucket() const { return floorDiv(from_ns, kBucketNs); }
  int64_t last_bucket() const { return floorDiv(to_ns - 1, kBucketNs); }
  bool contains(int64_t bucket) const {
    return bucket >= first_bucket() && bucket <= last_bucket();
  }
};

// The window a request asks for (RFC 3339 bounds), or the last `default_minutes` before `now`.
// Throws std::invalid_argument on a malformed or empty window.
Window resolveWindow(const std::optional<TimeWindow>& w, int64_t now, int64_t default_minutes);

// Distribution accumulated over rows, with the buckets it spans (for rates). Rows are merged
// straight from their stored bytes (no intermediate sketch), and an Acc is reused across keys
// (clear() keeps the bin storage), so a batchGet does not allocate per row.
struct Acc {
  DDSketch sketch;
  double x1 = 0, x2 = 0, x3 = 0;
  int line = 0;
  int64_t first = INT64_MAX, last = INT64_MIN;
  bool used() const { return first <= last; }
  // Throws DDSketchError, changing nothing, when the blob is corrupt or of another accuracy.
  void add(std::string_view blob, double a, double b, double c, int l, int64_t bucket) {
    if (!used()) {
      sketch.assignSerialized(blob);  // the first row: a copy instead of a merge into nothing
    } else {
      sketch.mergeSerialized(blob);
    }
    AggValue::addCount(x1, a);
    AggValue::addSum(x2, b);
    AggValue::addCount(x3, c);
    if (l) line = l;
    first = std::min(first, bucket);
    last = std::max(last, bucket);
  }
  void clear() {
    sketch.clear();
    x1 = x2 = x3 = 0;
    line = 0;
    first = INT64_MAX;
    last = INT64_MIN;
  }
  // Seconds of the window the data actually covers: a service that started 10 minutes ago has a
  // rate over 10 minutes, not over the 24 h window.
  double seconds(const Window& w) const {
    if (first > last) return 0;
    double from = static_cast<double>(std::max(w.from_ns, first * kBucketNs));
    double to = static_cast<double>(std::min(w.to_ns, (last + 1) * kBucketNs));
    double s = (to - from) / 1e9;
    return s > 1 ? s : 1;
  }
};

// Counts are at most DDSketch::kMaxCount (1e18 < 2^63); the clamp also keeps a stored extra
// beyond it (or NaN, read as 0) from overflowing the conversion.
uint64_t roundCount(double c);

// x1, x2, x3 as stored, for reading: a row written before they were bounded may hold inf (or a
// NULL read as 0); it reads clamped rather than spreading inf into answers.
inline double storedCount(double v) { return AggValue::clampExtra(v, DDSketch::kMaxCount); }
inline double storedSum(double v) { return AggValue::clampExtra(v, DDSketch::kMaxSum); }

// Durations are answered in whole nanoseconds: a sketch 1 % accurate has no digits below them,
// and the shortest form of a fractional value ("2034871.0938261") is half again as many bytes of
// a large answer and several times the cost to write and to parse.
double wholeNs(double ns);

Stats toStats(const Acc& a, const Window& w, const TimeWindow& formatted);

// The aggregate rows of one key, accumulated while its rows stream by and turned into the
// item's statistics when the next key starts. One KeyAcc serves every key of a batchGet, so the
// per-key containers (callers, loops, versions) keep their storage instead of being rebuilt.
struct KeyAcc {
  struct Caller {
    std::string name;
    Acc acc;
  };
  struct Loop {
    int ordinal = 0;
    Acc acc;
  };
  Acc fn_cur, fn_base, sizes;
  // The current window's AggKind::kSampled rows: weighted calls recorded by sampling, records.
  double sampled_calls = 0, sampled_records = 0;
  std::vector<Caller> callers;  // the first n_callers are this key's
  size_t n_callers = 0;
  std::unordered_map<std::string, size_t> caller_index;  // only for keys with many callers
  std::vector<Loop> loops;
  size_t n_loops = 0;
  std::vector<std::string> versions, services;
  size_t n_versions = 0, n_services = 0;
  std::vector<uint32_t> order;  // scratch for sorting a key's callers

  void clear() {
    fn_cur.clear();
    fn_base.clear();
    sizes.clear();
    sampled_calls = sampled_records = 0;
    for (size_t i = 0; i < n_callers; ++i) callers[i].acc.clear();
    for (size_t i = 0; i < n_loops; ++i) loops[i].acc.clear();
    n_callers = n_loops = n_versions = n_services = 0;
    if (!caller_index.empty()) caller_index.clear();
  }
  Acc& caller(std::string_view name) {
    constexpr size_t kLinear = 16;  // callers per key are few; index the rest
    if (n_callers <= kLinear) {
      for (size_t i = 0; i < n_callers; ++i) {
        if (callers[i].name == name) return callers[i].acc;
      }
    } else if (auto it = caller_index.find(std::string(name)); it != caller_index.end()) {
      return callers[it->second].acc;
    }
    if (n_callers == callers.size()) callers.emplace_back();
    Caller& c = callers[n_callers++];
    c.name.assign(name);
    if (n_callers > kLinear) {
      if (caller_index.empty()) {
        for (size_t i = 0; i + 1 < n_callers; ++i) caller_index.emplace(callers[i].name, i);
      }
      caller_index.emplace(c.name, n_callers - 1);
    }
    return c.acc;
  }
  Acc& loop(int ordinal) {
    for (size_t i = 0; i < n_loops; ++i) {
      if (loops[i].ordinal == ordinal) return loops[i].acc;
    }
    if (n_loops == loops.size()) loops.emplace_back();
    Loop& l = loops[n_loops++];
    l.ordinal = ordinal;
    return l.acc;
  }
  static void note(std::vector<std::string>& set, size_t& n, std::string_view v) {
    for (size_t i = 0; i < n; ++i) {
      if (set[i] == v) return;
    }
    if (n == set.size()) set.emplace_back();
    set[n++].assign(v);
  }
};

}  // namespace perfhat::handler::store_detail
