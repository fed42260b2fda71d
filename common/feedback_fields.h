// The fields of a batchGet answer (DESIGN §6), described once for every writer, the nlohmann
// one (common/feedback.cc) and the streaming one of the handler (http/feedback_writer.cc), and
// for the reader (from_json, common/feedback.cc).
//
// describe(value, out) calls, for each field present, in the order writers emit them
// (alphabetical: the order of nlohmann's std::map-backed objects, so the two agree byte for
// byte):
//   out.field(name, scalar)         a number or a string
//   out.object(name, nested)        a nested struct, itself described by describe()
//   out.list(name, vector)          an array of strings or of described structs
// A field a writer leaves out when it has no value goes through fieldWhen, listWhen or
// optionalValue. The reader (an Out with kVisitsEveryField) visits every field:
// it accepts any order, and an absent field leaves the value as it is.
#pragma once

#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "common/feedback.h"

namespace perfhat {

template <typename Out>
inline constexpr bool kVisitsEveryField = requires {
  Out::kVisitsEveryField;
};

template <typename Out, typename T>
void fieldWhen(bool present, const char* name, const T& v, Out& out) {
  if (present || kVisitsEveryField<Out>) out.field(name, v);
}

template <typename Out, typename T>
void listWhen(bool present, const char* name, const std::vector<T>& v, Out& out) {
  if (present || kVisitsEveryField<Out>) out.list(name, v);
}

// A value that may be absent: a scalar is a field, a struct an object.
template <typename Out, typename T>
void optionalValue(const char* name, const std::optional<T>& v, Out& out) {
  constexpr bool kScalar = std::is_arithmetic_v<T> || std::is_same_v<T, std::string>;
  if constexpr (kVisitsEveryField<Out>) {
    if constexpr (kScalar) out.field(name, v);
    if constexpr (!kScalar) out.object(name, v);
  } else if (v) {
    if constexpr (kScalar) out.field(name, *v);
    if constexpr (!kScalar) out.object(name, *v);
  }
}

template <typename Out>
void describe(const TimeWindow& v, Out& out) {
  out.field("from", v.from);
  out.field("to", v.to);
}

template <typename Out>
void describe(const Stats& v, Out& out) {
  out.field("count", v.count);
  out.field("errors", v.errors);
  out.field("max_ns", v.max_ns);
  out.field("mean_ns", v.mean_ns);
  out.field("min_ns", v.min_ns);
  out.field("p50_ns", v.p50_ns);
  out.field("p90_ns", v.p90_ns);
  out.field("p95_ns", v.p95_ns);
  out.field("p99_ns", v.p99_ns);
  out.field("rate_per_s", v.rate_per_s);
  out.object("window", v.window);
}

template <typename Out>
void describe(const CallSiteStats& v, Out& out) {
  out.field("caller", v.caller);
  optionalValue("caller_input_size", v.caller_input_size, out);
  out.field("caller_rate_per_s", v.caller_rate_per_s);
  out.field("calls_per_parent", v.calls_per_parent);
  out.field("count", v.count);
  out.field("mean_ns", v.mean_ns);
  out.field("p50_ns", v.p50_ns);
  out.field("p90_ns", v.p90_ns);
  out.field("p99_ns", v.p99_ns);
}

template <typename Out>
void describe(const LoopStats& v, Out& out) {
  out.field("count", v.count);
  out.field("iterations_mean", v.iterations_mean);
  out.field("iterations_p90", v.iterations_p90);
  out.field("line", v.line);
  out.field("ordinal", v.ordinal);
}

template <typename Out>
void describe(const SizeStats& v, Out& out) {
  out.field("count", v.count);
  out.field("max", v.max);
  out.field("mean", v.mean);
  out.field("p90", v.p90);
}

template <typename Out>
void describe(const Exposure& v, Out& out) {
  out.field("observed_count", v.observed_count);
  out.list("releases", v.releases);
  out.field("replicas", v.replicas);
  out.field("replicas_probed", v.replicas_probed);
  out.field("traffic_basis", v.traffic_basis);
  out.field("traffic_share", v.traffic_share);
}

template <typename Out>
void describe(const UnprobedKey& v, Out& out) {
  out.object("exposure", v.exposure);
  out.field("key", v.key);
}

template <typename Out>
void describe(const FeedbackItem& v, Out& out) {
  optionalValue("baseline", v.baseline, out);
  out.list("callsites", v.callsites);
  fieldWhen(v.dropped_calls > 0, "dropped_calls", v.dropped_calls, out);
  optionalValue("exposure", v.exposure, out);
  fieldWhen(!v.file.empty(), "file", v.file, out);
  listWhen(!v.hosts.empty(), "hosts", v.hosts, out);
  out.field("key", v.key);
  fieldWhen(!v.last_seen.empty(), "last_seen", v.last_seen, out);
  fieldWhen(v.line != 0, "line", v.line, out);
  out.list("loops", v.loops);
  fieldWhen(!v.mangled.empty(), "mangled", v.mangled, out);
  optionalValue("result_size", v.result_size, out);
  fieldWhen(v.sampled_calls > 0, "sampled_calls", v.sampled_calls, out);
  fieldWhen(v.sampled_calls > 0, "sampled_records", v.sampled_records, out);
  listWhen(!v.services.empty(), "services", v.services, out);
  optionalValue("stats", v.stats, out);
  out.list("versions", v.versions);
}

}  // namespace perfhat
