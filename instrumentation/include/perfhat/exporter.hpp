// Exporter strategy interface of libperfhat and the data it receives. Implementations: the
// in-memory exporter (tests, benchmarks; perfhat/memory_exporter.hpp) and OTLP/HTTP
// (perfhat::otlp, perfhat/otlp_exporter.hpp). Exporters run on the background thread only.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "perfhat/perfhat.hpp"

namespace perfhat {

struct AttributeValue {
  std::string key;
  enum Kind { kInt, kDouble, kString } kind = kInt;
  int64_t i = 0;
  double d = 0;
  std::string s;
};

// One phase-2 span, fully resolved (names, mangled symbol, wall-clock times).
struct SpanData {
  std::array<uint8_t, 16> trace_id{};
  uint64_t span_id = 0;
  uint64_t parent_span_id = 0;  // 0 = root
  std::string name;             // scope/request name, else the function name
  std::string function;         // code.function.name (__PRETTY_FUNCTION__ or demangled symbol)
  std::string mangled;          // code.function.mangled (may be empty if unresolvable)
  std::string file;             // code.file.path
  uint32_t line = 0;            // code.line.number
  bool is_request = false;
  uint64_t start_unix_ns = 0, end_unix_ns = 0;
  double weight = 1;             // perfhat.sampling.weight
  int64_t result_size = -1;      // perfhat.result.size (-1 = absent)
  int64_t loop_iterations = -1;  // perfhat.loop.iterations
  uint32_t loop_line = 0;
  bool error = false;
  uint64_t thread_id = 0;
  std::vector<AttributeValue> attributes;
  // The probe site the span came from (the engine's site id; 0 = unknown, e.g. a hand-built
  // span). Spans with the same non-zero site carry the same name, function, mangled, file and
  // line for the life of the process, so an exporter may cache what it derives from those (the
  // OTLP encoder caches their encoded bytes: function names are static).
  uint32_t site = 0;
};

// Phase-1 estimates of one function over [start, end): exact counts for every call, sampled or
// not, so a receiver can unbias sampled spans.
struct AggregateData {
  std::string name, function, mangled, file;
  uint32_t line = 0;
  uint64_t count = 0;
  uint64_t errors = 0;
  // Estimated total duration of the `count` calls: count x the mean of the `timed_count` calls
  // that were timed (1 in Config::timing_period, chosen independently of their duration).
  double sum_ns = 0;
  uint64_t timed_count = 0;
  double result_size_sum = 0;  // PERFHAT_RESULT_SIZE over every call (population, not sample)
  uint64_t result_size_n = 0;
  uint64_t start_unix_ns = 0, end_unix_ns = 0;
  bool relevant = true;  // in Tigris' current relevant set
};

struct Resource {
  std::string service_name, service_version, host_name;
  // The release and variant this process runs (Config::variant_manifest); empty without one.
  std::string release, variant, replica;
};

// Identity of a probe site, as its spans would carry it (code.* attributes).
struct SiteIdentity {
  std::string name, function, mangled, file;
  uint32_t line = 0;
};

// Aggregate export mode: one weighted histogram of one interval (docs/aggregate-export.md).
// Bins are those of a DDSketch with 1 % relative accuracy: value v in bin ceil(ln v / ln gamma).
struct HistogramData {
  enum Kind : uint8_t {
    kFunction,    // latency (ns) of the site's calls
    kCallSite,    // latency (ns) of the site's calls made under `caller`
    kLoop,        // iterations of the site's loop at `line`
    kResultSize,  // result sizes of the site's calls
    kSelfTime,    // self time (ns) of the site's calls: duration less their recorded children's
  };
  Kind kind = kFunction;
  uint32_t site = 0;                             // index into ExportBatch::sites
  uint32_t caller = 0;                           // kCallSite: index into ExportBatch::sites
  uint32_t line = 0;                             // kLoop
  int64_t minute = 0;                            // minutes since the Unix epoch
  double zero = 0;                               // weighted values below 1
  double sum = 0;                                // weighted sum
  double errors = 0;                             // kFunction: weighted failed calls
  double parents = 0;                            // kCallSite: weighted distinct caller invocations
  std::vector<std::pair<int32_t, double>> bins;  // (index, weighted count), ascending
  // kFunction: of the calls, those recorded at a rate below 1 (weighted) and their records; the
  // handler marks the function's data as estimated from samples when sampled_calls > 0.
  double sampled_calls = 0;
  double sampled_records = 0;

  double count() const {
    double n = zero;
    for (const auto& b : bins) n += b.second;
    return n;
  }
};

// What the library lost since it last reported it: batches that failed after their retries (the
// handler was unreachable or refused them). Sent as the "dropped" member of the next
// POST /v1/aggregates (docs/aggregate-export.md) and kept until a request carrying it succeeds.
struct DroppedReport {
  double calls = 0;    // weighted calls whose span or aggregate row was lost
  uint64_t spans = 0;  // spans lost
  uint64_t rows = 0;   // aggregate rows lost
  bool any() const { return calls > 0 || spans > 0 || rows > 0; }
};

struct ExportBatch {
  Resource resource;
  std::vector<SpanData> spans;
  std::vector<AggregateData> aggregates;
  // Aggregate export mode.
  std::vector<SiteIdentity> sites;
  std::vector<HistogramData> histograms;
  uint64_t histograms_end_unix_ns = 0;  // end of the interval the histograms cover
  DroppedReport dropped;  // sent with the histograms (an aggregates request even without rows)
};

enum class ExportResult { kSuccess, kRetryableFailure, kPermanentFailure };

class Exporter {
 public:
  virtual ~Exporter() = default;
  virtual ExportResult export_batch(const ExportBatch& batch) = 0;
  // Called when probes are first turned on, on the thread that turns them on, before the exit
  // flush is registered: an exporter loads and initialises what it will need here. Loading a
  // library later, on the background thread while the program runs its exit handlers, races
  // with their clean-up (OpenSSL's, for one).
  virtual void start() {}
  virtual void shutdown() {}
  virtual std::string last_error() const { return {}; }
  // The collection budget's status as JSON (docs/collection-budget.md), sent every few seconds
  // by the background thread when PERFHAT_BUDGET is on. Exporters without a place for it refuse.
  virtual ExportResult export_budget_status(const std::string& /*json*/) {
    return ExportResult::kPermanentFailure;
  }
};

// Installs `exporter` instead of the one the configuration would pick (tests, benchmarks,
// custom backends). Equivalent to init(config) otherwise.
bool init(const Config& config, std::shared_ptr<Exporter> exporter);

}  // namespace perfhat
