// Feedback data: what the handlers serve and the language server consumes (DESIGN §4, §12).
//
// This is the wire contract of `POST /v1/feedback:batchGet`, `GET /v1/feedback` and of the
// `--feedback-file` dataset format. Every type has its `to_json`/`from_json` beside it.
// Durations are nanoseconds (double). Unknown JSON fields are ignored; missing optional fields
// stay empty, so older and newer handlers interoperate.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace perfhat {

// RFC 3339 UTC timestamps ("2026-11-21T00:00:00Z"); empty = open-ended.
struct TimeWindow {
  std::string from;
  std::string to;
  bool operator==(const TimeWindow&) const = default;
};

// Latency statistics of one function (or one call site) over a window.
struct Stats {
  uint64_t count = 0;
  uint64_t errors = 0;
  double mean_ns = 0;
  double min_ns = 0;
  double max_ns = 0;
  double p50_ns = 0;
  double p90_ns = 0;
  double p95_ns = 0;
  double p99_ns = 0;
  // Calls per second over the window (count / window length); 0 when unknown.
  double rate_per_s = 0;
  TimeWindow window;
  bool operator==(const Stats&) const = default;
};

// One caller → callee edge, listed on the callee's item. The parent's workload
// (caller_rate_per_s, caller_input_size) is what method-invocation inference regresses on.
struct CallSiteStats {
  std::string caller;  // function key of the parent span's function
  uint64_t count = 0;
  double mean_ns = 0;
  double p50_ns = 0;
  double p90_ns = 0;
  double p99_ns = 0;
  double caller_rate_per_s = 0;             // parent's calls per second
  std::optional<double> caller_input_size;  // mean input-size attribute of the parent
  double calls_per_parent = 0;              // mean callee calls per parent invocation; 0 = unknown
  bool operator==(const CallSiteStats&) const = default;
};

// A loop of the function, keyed by its ordinal in source order (DESIGN §3), with a line hint.
struct LoopStats {
  int ordinal = 0;
  int line = 0;
  double iterations_mean = 0;
  double iterations_p90 = 0;
  uint64_t count = 0;
  bool operator==(const LoopStats&) const = default;
};

// Size of the collection the function returns (perfhat.result.size).
struct SizeStats {
  double mean = 0;
  double p90 = 0;
  double max = 0;
  uint64_t count = 0;
  bool operator==(const SizeStats&) const = default;
};

// Probe distribution across deployed variants (docs/plan.md "Exposure"): when the window's
// releases ran variants, a function's data comes from the replicas whose variant probed it.
struct Exposure {
  std::vector<std::string> releases;  // releases with traffic in the window
  uint64_t replicas = 0;              // their replicas (manifest assignments)
  uint64_t replicas_probed = 0;       // ... whose variant probes this function
  double traffic_share = 0;           // share of the releases' traffic those replicas served
  std::string traffic_basis;          // "requests" (request roots counted per variant) or
                                      // "replicas" (no requests counted: share of replicas)
  uint64_t observed_count = 0;        // calls observed; stats.count = observed / traffic_share
  bool operator==(const Exposure&) const = default;
};

// A requested key that no variant of the window's releases probes: "not probed", not "no data".
struct UnprobedKey {
  std::string key;
  Exposure exposure;  // replicas_probed = 0, traffic_share = 0
  bool operator==(const UnprobedKey&) const = default;
};

// Everything known about one function key.
struct FeedbackItem {
  std::string key;                       // canonical signature (DESIGN §3)
  std::string mangled;                   // Itanium mangled name when known
  std::optional<Stats> stats;            // current window
  std::optional<Stats> baseline;         // baseline window, when requested
  std::vector<CallSiteStats> callsites;  // this function as callee, per caller
  std::vector<LoopStats> loops;
  std::optional<SizeStats> result_size;
  std::vector<std::string> versions;  // service.version values seen
  std::vector<std::string> services;  // service.name values seen
  std::vector<std::string> hosts;     // host.name values seen
  std::string file;                   // code.file.path as reported by the runtime
  int line = 0;                       // code.line.number
  std::string last_seen;              // RFC 3339
  // Weighted calls that the exporters of this function's services reported lost in the window
  // (docs/aggregate-export.md `dropped`): its counts may be low by up to this many calls.
  double dropped_calls = 0;
  std::optional<Exposure> exposure;  // only when the window's releases ran variants
  // Of the current window's calls, the weighted number that were recorded by sampling (a weight
  // other than 1: the request sampler or libperfhat's collection budget) and how many records
  // carried them. sampled_calls > 0: count and percentiles are estimated from samples
  // (docs/collection-budget.md). Both 0 when every call was recorded, or the handler is older.
  double sampled_calls = 0;
  double sampled_records = 0;
  bool operator==(const FeedbackItem&) const = default;
};

struct BatchGetRequest {
  std::vector<std::string> keys;  // canonical keys or mangled names
  std::optional<TimeWindow> range;
  std::optional<TimeWindow> baseline;
  bool operator==(const BatchGetRequest&) const = default;
};

struct BatchGetResponse {
  std::vector<FeedbackItem> items;
  std::vector<std::string> missing;   // requested keys with no data
  std::vector<UnprobedKey> unprobed;  // of those, the ones no variant probes (also in missing)
  std::string cursor;                 // change cursor at the time of the read ("" if not tracked)
  bool operator==(const BatchGetResponse&) const = default;
};

void to_json(nlohmann::json& j, const TimeWindow& v);
void from_json(const nlohmann::json& j, TimeWindow& v);
void to_json(nlohmann::json& j, const Stats& v);
void from_json(const nlohmann::json& j, Stats& v);
void to_json(nlohmann::json& j, const CallSiteStats& v);
void from_json(const nlohmann::json& j, CallSiteStats& v);
void to_json(nlohmann::json& j, const LoopStats& v);
void from_json(const nlohmann::json& j, LoopStats& v);
void to_json(nlohmann::json& j, const SizeStats& v);
void from_json(const nlohmann::json& j, SizeStats& v);
void to_json(nlohmann::json& j, const Exposure& v);
void from_json(const nlohmann::json& j, Exposure& v);
void to_json(nlohmann::json& j, const UnprobedKey& v);
void from_json(const nlohmann::json& j, UnprobedKey& v);
void to_json(nlohmann::json& j, const FeedbackItem& v);
void from_json(const nlohmann::json& j, FeedbackItem& v);
void to_json(nlohmann::json& j, const BatchGetRequest& v);
void from_json(const nlohmann::json& j, BatchGetRequest& v);
void to_json(nlohmann::json& j, const BatchGetResponse& v);
void from_json(const nlohmann::json& j, BatchGetResponse& v);

// Thrown by the parse helpers below with a message that names the offending field.
class FeedbackFormatError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Parses a batchGet response (also the --feedback-file format). A document may also be a bare
// array of items. Throws FeedbackFormatError on malformed JSON or wrong types.
BatchGetResponse parseBatchGetResponse(std::string_view text);
BatchGetRequest parseBatchGetRequest(std::string_view text);
// The usual batchGet body, {"keys":["…",…]} as serialize() writes it with keys of printable
// ASCII and no escapes, read by scanning for quotes: nlohmann's lexer took 2–3 ms for 10,000 keys
// on the server thread, before anything else of the request could start. Returns false, leaving
// `keys` unchanged, for any other text; parseBatchGetRequest then uses the full parser.
bool parsePlainKeysRequest(std::string_view text, std::vector<std::string>& keys);
std::string serialize(const BatchGetResponse& response);
std::string serialize(const BatchGetRequest& request);

}  // namespace perfhat
