#include "feedback-handler/ingest/aggregate_rows.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "common/json_parse.h"
#include "feedback-handler/ingest/aggregator.h"
#include "feedback-handler/ingest/sampled_rows.h"
#include "feedback-handler/ingest/span_key.h"
#include "feedback-handler/ingest/variant_traffic.h"

namespace perfhat::handler {
namespace {

using json = nlohmann::json;

[[noreturn]] void fail(const std::string& what) { throw AggregateRowsError("aggregates: " + what); }

const json* member(const json& o, const char* name) {
  auto it = o.find(name);
  return it == o.end() || it->is_null() ? nullptr : &*it;
}

std::string optString(const json& o, const char* name, const std::string& where,
                      size_t max_bytes = IntakeLimits::kMaxKeyBytes) {
  const json* v = member(o, name);
  if (v == nullptr) return {};
  if (!v->is_string()) fail(where + "." + name + " must be a string");
  const auto& s = v->get_ref<const std::string&>();
  if (s.size() > max_bytes) {
    fail(where + "." + name + " is longer than " + std::to_string(max_bytes) + " bytes");
  }
  return s;
}

// A non-negative integer no larger than `max`; numbers and decimal strings (64-bit times).
uint64_t optUnsigned(const json& o, const char* name, const std::string& where, uint64_t max,
                     uint64_t def = 0) {
  const json* v = member(o, name);
  if (v == nullptr) return def;
  uint64_t out = 0;
  if (v->is_number_unsigned()) {
    out = v->get<uint64_t>();
  } else if (v->is_number_integer() && v->get<int64_t>() >= 0) {
    out = static_cast<uint64_t>(v->get<int64_t>());
  } else if (v->is_string()) {
    const std::string& s = v->get_ref<const std::string&>();
    auto digit = [](unsigned char c) { return c >= '0' && c <= '9'; };
    if (s.empty() || s.size() > 20 || !std::all_of(s.begin(), s.end(), digit)) {
      fail(where + "." + name + " must be a non-negative integer");
    }
    try {
      out = std::stoull(s);
    } catch (const std::exception&) {
      fail(where + "." + name + " is out of range");
    }
  } else {
    fail(where + "." + name + " must be a non-negative integer");
  }
  if (out > max) fail(where + "." + name + " is out of range");
  return out;
}

// A number in [0, max] (0 when absent).
double optAmount(const json& o, const char* name, const std::string& where, double max) {
  const json* v = member(o, name);
  if (v == nullptr) return 0;
  if (!v->is_number()) fail(where + "." + name + " must be a number");
  const double d = v->get<double>();
  if (!(d >= 0 && d <= max)) {
    char range[32];
    std::snprintf(range, sizeof range, "%g", max);
    fail(where + "." + name + " must be a number in [0, " + range + "]");
  }
  return d;
}

SpanIdentity decodeSite(const json& s, const std::string& where) {
  if (!s.is_object()) fail(where + " must be an object");
  // The span libperfhat would have sent for a call of this site (otlp_encode.cc code_attrs).
  otlp::Span span;
  span.name = optString(s, "name", where);
  const std::string function = optString(s, "function", where);
  const std::string mangled = optString(s, "mangled", where);
  const std::string file = optString(s, "file", where, IntakeLimits::kMaxPathBytes);
  const uint64_t line = optUnsigned(s, "line", where, std::numeric_limits<int32_t>::max());
  if (!function.empty()) span.attributes.emplace_back("code.function.name", function);
  if (!mangled.empty()) span.attributes.emplace_back("code.function.mangled", mangled);
  if (!file.empty()) span.attributes.emplace_back("code.file.path", file);
  if (line != 0) span.attributes.emplace_back("code.line.number", static_cast<int64_t>(line));
  SpanIdentity id = identifySpan(span);
  if (id.key.size() > IntakeLimits::kMaxKeyBytes) {
    fail(where + ": its function key is longer than 4096 bytes");
  }
  return id;
}

ResourceDims decodeResource(const json& root) {
  otlp::Attributes resource;
  if (const json* r = member(root, "resource")) {
    if (!r->is_object()) fail("resource must be an object");
    for (const char* k : {"service.name", "service.version", "deployment.environment",
                          "deployment.environment.name", "host.name", "perfhat.release",
                          "perfhat.variant", "perfhat.replica"}) {
      std::string v = optString(*r, k, "resource", IntakeLimits::kMaxDimensionBytes);
      if (!v.empty()) resource.emplace_back(k, std::move(v));
    }
  }
  return resourceDims(resource);
}

std::vector<SpanIdentity> decodeSites(const json& root) {
  std::vector<SpanIdentity> sites;
  if (const json* s = member(root, "sites")) {
    if (!s->is_array()) fail("sites must be an array");
    sites.reserve(s->size());
    for (size_t i = 0; i < s->size(); ++i) {
      sites.push_back(decodeSite((*s)[i], "sites[" + std::to_string(i) + "]"));
    }
  }
  return sites;
}

AggKind decodeKind(const json& r, const std::string& where) {
  const std::string kind = optString(r, "kind", where);
  if (kind == "function") return AggKind::kFunction;
  if (kind == "callsite") return AggKind::kCallSite;
  if (kind == "loop") return AggKind::kLoop;
  if (kind == "size") return AggKind::kResultSize;
  if (kind == "self") return AggKind::kSelfTime;
  fail(where + ".kind must be function, callsite, loop, size or self");
}

// The row's histogram: its `bins` ([index, count] pairs) with the zero bucket and the sum.
DDSketch decodeSketch(const json& r, const std::string& where, double zero, double sum) {
  std::vector<std::pair<int, double>> bins;
  if (const json* b = member(r, "bins")) {
    if (!b->is_array()) fail(where + ".bins must be an array");
    bins.reserve(b->size());
    for (const json& pair : *b) {
      if (!pair.is_array() || pair.size() != 2 || !pair[0].is_number_integer() ||
          !pair[1].is_number()) {
        fail(where + ".bins must hold [index, count] pairs");
      }
      const auto index = pair[0].get<int64_t>();
      if (index < -100000 || index > 100000) fail(where + ".bins: index out of range");
      bins.emplace_back(static_cast<int>(index), pair[1].get<double>());
    }
  }
  try {
    return DDSketch::fromBins(bins, zero, sum);
  } catch (const DDSketchError& e) {
    fail(where + ": " + e.what());
  }
}

// Losses the library reports once (a delta), charged to the service in the minute of the
// report: readers show them beside the counts of that service's functions. Returns the lost
// calls (0 without a report).
double decodeDropped(const json& root, const ResourceDims& dims, int64_t time_ns, Batch& local) {
  const json* d = member(root, "dropped");
  if (d == nullptr) return 0;
  if (!d->is_object()) fail("dropped must be an object");
  constexpr uint64_t kMaxLost = uint64_t{1} << 53;  // exact in a double
  const double calls = optAmount(*d, "calls", "dropped", DDSketch::kMaxCount);
  const auto spans = static_cast<double>(optUnsigned(*d, "spans", "dropped", kMaxLost));
  const auto rows_lost = static_cast<double>(optUnsigned(*d, "rows", "dropped", kMaxLost));
  if (!(calls > 0 || spans > 0 || rows_lost > 0)) return 0;
  if (member(root, "time_unix_nano") == nullptr) fail("dropped needs time_unix_nano");
  AggValue v;
  v.x1 = calls;
  v.x2 = spans;
  v.x3 = rows_lost;
  local
      .aggregates[AggKey{AggKind::kDropped, "", "", time_ns / kBucketNs, dims.service, dims.version,
                         dims.env, ""}]
      .merge(v);
  return calls;
}

}  // namespace

AggregateRowsStats decodeAggregateRows(std::string_view body, Batch& batch,
                                       const TimeBounds* bounds) {
  const JsonParse parsed = parseJson(body);  // nesting-limited: see common/json_parse.h
  if (!parsed.ok()) fail("body is " + parsed.error);
  const json& root = parsed.value;
  if (!root.is_object()) fail("body must be a JSON object");

  const ResourceDims dims = decodeResource(root);
  const auto time_ns = static_cast<int64_t>(optUnsigned(
      root, "time_unix_nano", "body", static_cast<uint64_t>(std::numeric_limits<int64_t>::max())));
  // The functions' and hosts' last-seen time: outside the window, purge would never remove them.
  if (bounds && member(root, "time_unix_nano") && !bounds->contains(time_ns)) {
    fail("time_unix_nano is outside the accepted window " + bounds->describe() +
         " (the retention back from now, up to 10 minutes of clock skew ahead)");
  }

  const std::vector<SpanIdentity> sites = decodeSites(root);

  // Everything is decoded and checked into `local` first: a bad row leaves `batch` untouched.
  Batch local;
  AggregateRowsStats st;
  std::vector<bool> used(sites.size(), false);
  const json* rows = member(root, "rows");
  if (rows != nullptr && !rows->is_array()) fail("rows must be an array");
  for (size_t i = 0; rows != nullptr && i < rows->size(); ++i) {
    const json& r = (*rows)[i];
    const std::string where = "rows[" + std::to_string(i) + "]";
    if (!r.is_object()) fail(where + " must be an object");
    const AggKind k = decodeKind(r, where);
    const json* site_index = member(r, "site");
    if (site_index == nullptr) fail(where + ".site is missing");
    if (sites.empty()) fail(where + ".site: there are no sites");
    const uint64_t site = optUnsigned(r, "site", where, sites.size() - 1);
    uint64_t caller = 0;
    if (k == AggKind::kCallSite) {
      if (member(r, "caller") == nullptr) fail(where + ".caller is missing");
      caller = optUnsigned(r, "caller", where, sites.size() - 1);
    }
    const auto minute = static_cast<int64_t>(optUnsigned(r, "minute", where, uint64_t{1} << 40));
    if (bounds && !bounds->containsBucket(minute)) {
      fail(where + ".minute is outside the accepted window " + bounds->describe() +
           " (the retention back from now, up to 10 minutes of clock skew ahead)");
    }
    const auto line = static_cast<int>(
        optUnsigned(r, "line", where, static_cast<uint64_t>(std::numeric_limits<int32_t>::max())));
    const double zero = optAmount(r, "zero", where, DDSketch::kMaxCount);
    const double sum = optAmount(r, "sum", where, DDSketch::kMaxSum);
    const double errors = optAmount(r, "errors", where, DDSketch::kMaxCount);
    const double parents = optAmount(r, "parents", where, DDSketch::kMaxCount);
    // Function rows: of the row's calls, those recorded at a rate below 1 (weighted) and their
    // records; absent from libperfhat before the collection budget.
    const double sampled_calls = optAmount(r, "sampled_calls", where, DDSketch::kMaxCount);
    const double sampled_records = optAmount(r, "sampled_records", where, DDSketch::kMaxCount);
    DDSketch sketch = decodeSketch(r, where, zero, sum);
    if (sketch.empty()) continue;  // adds nothing
    const SpanIdentity& id = sites[site];
    if (id.key.empty() || (k == AggKind::kCallSite && sites[caller].key.empty())) {
      ++st.skipped;
      continue;
    }
    AggKey key{k, id.key, "", minute, dims.service, dims.version, dims.env, ""};
    if (k == AggKind::kCallSite) key.sub = sites[caller].key;
    if (k == AggKind::kLoop) key.sub = "0";  // libperfhat's loops: ordinal 0, by line hint
    AggValue v;
    v.sketch = std::move(sketch);
    if (k == AggKind::kFunction) v.x1 = errors;
    if (k == AggKind::kCallSite) v.x1 = parents;
    if (k == AggKind::kLoop) v.line = line;
    // A variant's records, per minute (no request roots are told apart in this format).
    if (k == AggKind::kFunction) addTraffic(local, dims, minute, 0, v.sketch.count());
    auto [it, inserted] = local.aggregates.try_emplace(std::move(key));
    if (inserted) {
      it->second = std::move(v);
    } else {
      it->second.merge(v);
    }
    if (k == AggKind::kFunction && sampled_calls > 0) {
      AggKey sk{AggKind::kSampled, id.key, "", minute, dims.service, dims.version, dims.env, ""};
      noteSampled(local.aggregates[std::move(sk)], sampled_calls, sampled_records);
    }
    used[site] = true;
    ++st.rows;
  }
  st.dropped_calls = decodeDropped(root, dims, time_ns, local);
  for (size_t i = 0; i < sites.size(); ++i) {
    if (!used[i]) continue;
    const SpanIdentity& id = sites[i];
    FunctionInfo& f = local.functions[id.key];
    if (f.mangled.empty()) f.mangled = id.mangled;
    if (!id.file.empty()) f.file = id.file;
    if (id.line) f.line = id.line;
    f.last_seen_ns = std::max(f.last_seen_ns, time_ns);
    if (!dims.host.empty()) {
      int64_t& seen = local.hosts[{id.key, dims.host}];
      seen = std::max(seen, time_ns);
    }
  }
  batch.absorb(std::move(local));
  return st;
}

}  // namespace perfhat::handler
