// The fields of a batchGet answer (DESIGN §6), described once for every writer: the nlohmann
// one (common/feedback.cc) and the streaming one of the handler (http/feedback_writer.cc).
//
// describe(value, out) calls, for each field present, in the order writers emit them
// (alphabetical: the order of nlohmann's std::map-backed objects, so the two agree byte for
// byte):
//   out.field(name, scalar)         a number or a string
//   out.object(name, nested)        a nested struct, itself described by describe()
//   out.list(name, vector)          an array of strings or of described structs
// Reading (from_json) is not described here: it accepts any order and absent fields.
#pragma once

#include "common/feedback.h"

namespace perfhat {

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
  if (v.caller_input_size) out.field("caller_input_size", *v.caller_input_size);
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
  if (v.baseline) out.object("baseline", *v.baseline);
  out.list("callsites", v.callsites);
  if (v.dropped_calls > 0) out.field("dropped_calls", v.dropped_calls);
  if (v.exposure) out.object("exposure", *v.exposure);
  if (!v.file.empty()) out.field("file", v.file);
  if (!v.hosts.empty()) out.list("hosts", v.hosts);
  out.field("key", v.key);
  if (!v.last_seen.empty()) out.field("last_seen", v.last_seen);
  if (v.line != 0) out.field("line", v.line);
  out.list("loops", v.loops);
  if (!v.mangled.empty()) out.field("mangled", v.mangled);
  if (v.result_size) out.object("result_size", *v.result_size);
  if (v.sampled_calls > 0) out.field("sampled_calls", v.sampled_calls);
  if (v.sampled_calls > 0) out.field("sampled_records", v.sampled_records);
  if (!v.services.empty()) out.list("services", v.services);
  if (v.stats) out.object("stats", *v.stats);
  out.list("versions", v.versions);
}

}  // namespace perfhat
