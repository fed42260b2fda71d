// The unit of persistence: aggregates produced from one ingest request (or one sync pull),
// written to the store in one transaction before the request is acknowledged.
//
// Every aggregate is a weighted distribution (DDSketch, which also tracks count/sum/min/max)
// plus a few kind-specific extras, keyed by
//   kind × function key × sub-key × 1-minute bucket × service × version × environment × origin.
// `origin` is "" for data ingested here and the upstream's name for data pulled by a local
// handler, so re-pulling an upstream row replaces it instead of double-counting (exact merge).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>

#include "common/ddsketch.h"

namespace perfhat::handler {

enum class AggKind : char {
  kFunction = 'f',  // latency of the function's spans; x1 = weighted errors
  kCallSite = 'c',  // sub = caller key; latency of the callee under that caller;
                    // x1 = distinct parent spans, x2 = Σ input size·w, x3 = Σ w with input size
  kLoop = 'l',      // sub = loop ordinal; distribution of iterations; line = line hint
  kResultSize = 's',  // distribution of perfhat.result.size
  kSelfTime = 't',    // self time of the function's calls: each call's duration minus its
                      // direct (probed) children's; see docs/dynamic-metrics.md
  kDropped = 'd',     // what a service's exporters lost (docs/aggregate-export.md `dropped`):
                      // key and sub empty, sketch empty; x1 = weighted calls, x2 = spans,
                      // x3 = rows. Read per service beside the counts they make low.
  kTraffic = 'v',     // what one release variant served (variants/exposure.h): key empty, sub
                      // "release|variant|replica", sketch empty; x1 = weighted request roots,
                      // x2 = weighted records
  kSampled = 'e',     // the function's calls recorded by sampling (a weight other than 1), sub
                      // empty, sketch empty; x1 = their weighted count, x2 = records. Marks the
                      // function's counts and percentiles as estimated (docs/collection-budget.md).
};

struct AggKey {
  AggKind kind = AggKind::kFunction;
  std::string key;
  std::string sub;
  int64_t bucket = 0;  // minutes since the Unix epoch
  std::string service;
  std::string version;
  std::string env;
  std::string origin;
  auto tie() const { return std::tie(kind, key, sub, bucket, service, version, env, origin); }
  bool operator==(const AggKey& o) const { return tie() == o.tie(); }
};

struct AggKeyHash {
  size_t operator()(const AggKey& k) const noexcept;
};

struct AggValue {
  DDSketch sketch;
  double x1 = 0;
  double x2 = 0;
  double x3 = 0;
  int line = 0;
  void merge(const AggValue& o);
  // x1 and x3 are weighted counts (at most DDSketch::kMaxCount), x2 a weighted sum (at most
  // DDSketch::kMaxSum): added saturating, so a stored row never holds inf or NaN (SQLite turns
  // NaN into NULL, and the row's write fails).
  static void addCount(double& into, double v) {
    into = saturatingSum(into, v, DDSketch::kMaxCount);
  }
  static void addSum(double& into, double v) { into = saturatingSum(into, v, DDSketch::kMaxSum); }
  // `v` as a stored extra: NaN and negatives read 0, beyond `cap` reads cap.
  static double clampExtra(double v, double cap) { return v >= 0 ? (v <= cap ? v : cap) : 0; }

 private:
  static double saturatingSum(double into, double v, double cap) {
    const double s = into + v;
    return s >= 0 ? (s <= cap ? s : cap) : into;  // NaN or negative: unchanged
  }
};

// Identity and location of a function key (from the code.* attributes).
struct FunctionInfo {
  std::string mangled;
  std::string file;
  int line = 0;
  int64_t last_seen_ns = 0;
};

struct Batch {
  std::unordered_map<AggKey, AggValue, AggKeyHash> aggregates;
  std::map<std::string, FunctionInfo> functions;
  // (key, host) → last seen
  std::map<std::pair<std::string, std::string>, int64_t> hosts;
  // Store bookkeeping written in the same transaction (e.g. a sync cursor per upstream), so data
  // and the cursor that produced it commit together: exactly-once pulls across crashes.
  std::map<std::string, int64_t> meta;
  bool empty() const { return aggregates.empty() && functions.empty(); }
  // Exact merge of a later batch into this one: sketches and sums add, function infos and meta
  // take the later non-empty values (as the store's upserts do), host times take the maximum.
  void absorb(Batch&& later);
};

constexpr int64_t kBucketNs = 60'000'000'000;  // 1 minute
// How far in the future a stored time may lie (clock skew between a runtime and the handler):
// the intake refuses later times with a reason, the store drops what other writers bring.
constexpr int64_t kClockSkewNs = 10LL * 60 * 1'000'000'000;

}  // namespace perfhat::handler
