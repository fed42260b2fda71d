#include "feedback-handler/ingest/aggregator.h"

#include <cmath>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "feedback-handler/ingest/span_key.h"

namespace perfhat::handler {
namespace {

using otlp::attrNumber;
using otlp::attrString;

struct ResourceDims {
  std::string service, version, env, host;
};

ResourceDims dims(const otlp::Attributes& r) {
  ResourceDims d;
  d.service = attrString(r, "service.name");
  d.version = attrString(r, "service.version");
  d.env = attrString(r, "deployment.environment.name");
  if (d.env.empty()) d.env = attrString(r, "deployment.environment");
  d.host = attrString(r, "host.name");
  for (std::string* v : {&d.service, &d.version, &d.env, &d.host}) *v = sanitizeUtf8(std::move(*v));
  return d;
}

double weightOf(const otlp::Span& s) {
  double w = 1;
  if (!attrNumber(s.attributes, "perfhat.sampling.weight", w) &&
      !attrNumber(s.attributes, "sampling.weight", w)) {
    return 1;
  }
  return std::isfinite(w) && w > 0 ? w : 1;
}

AggValue& slot(Batch& b, AggKind kind, const std::string& key, std::string sub, int64_t bucket,
               const ResourceDims& d) {
  AggKey k{kind, key, std::move(sub), bucket, d.service, d.version, d.env, ""};
  return b.aggregates.try_emplace(std::move(k)).first->second;
}

}  // namespace

IngestStats aggregate(const otlp::ExportRequest& request, Batch& batch) {
  IngestStats st;
  std::vector<ResourceDims> res;
  res.reserve(request.resources.size());
  for (const auto& r : request.resources) res.push_back(dims(r));

  const size_t n = request.spans.size();
  std::vector<SpanIdentity> ids(n);
  std::vector<bool> is_loop(n, false);
  // (trace id + span id) → span index, to find parents within the request.
  std::unordered_map<std::string, size_t> by_id;
  by_id.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const auto& s = request.spans[i];
    ids[i] = identifySpan(s);
    is_loop[i] = otlp::findAttr(s.attributes, "perfhat.loop.ordinal") != nullptr;
    by_id.emplace(s.trace_id + s.span_id, i);
  }
  // Distinct parents per call edge in this request (for calls_per_parent).
  std::unordered_set<std::string> edge_parents;

  for (size_t i = 0; i < n; ++i) {
    const auto& s = request.spans[i];
    const SpanIdentity& id = ids[i];
    if (id.key.empty()) {
      ++st.skipped;
      continue;
    }
    ++st.spans;
    static const ResourceDims kNone;
    const ResourceDims& d = s.resource < res.size() ? res[s.resource] : kNone;
    const double w = weightOf(s);
    const auto start = static_cast<int64_t>(s.start_unix_nano);
    const int64_t bucket = start / kBucketNs;
    const double dur = static_cast<double>(s.end_unix_nano - s.start_unix_nano);

    FunctionInfo& fi = batch.functions[id.key];
    if (fi.mangled.empty()) fi.mangled = id.mangled;
    if (!is_loop[i]) {
      if (!id.file.empty()) fi.file = id.file;
      if (id.line) fi.line = id.line;
    }
    fi.last_seen_ns = std::max<int64_t>(fi.last_seen_ns, static_cast<int64_t>(s.end_unix_nano));
    if (!d.host.empty()) {
      int64_t& seen = batch.hosts[{id.key, d.host}];
      seen = std::max<int64_t>(seen, static_cast<int64_t>(s.end_unix_nano));
    }

    double iterations = 0;
    bool has_iterations = attrNumber(s.attributes, "perfhat.loop.iterations", iterations);
    if (has_iterations) {
      double ordinal = 0, line = 0;
      attrNumber(s.attributes, "perfhat.loop.ordinal", ordinal);
      attrNumber(s.attributes, "perfhat.loop.line", line);
      AggValue& lv = slot(batch, AggKind::kLoop, id.key,
                          std::to_string(static_cast<int64_t>(std::max(0.0, ordinal))), bucket, d);
      lv.sketch.add(iterations, w);
      if (line > 0 && line < 1e9) lv.line = static_cast<int>(line);
    }
    if (is_loop[i]) continue;  // a loop-site record, not a call of the function

    AggValue& fv = slot(batch, AggKind::kFunction, id.key, "", bucket, d);
    fv.sketch.add(dur, w);
    if (s.status == otlp::StatusCode::kError) fv.x1 += w;

    double size = 0;
    if (attrNumber(s.attributes, "perfhat.result.size", size)) {
      slot(batch, AggKind::kResultSize, id.key, "", bucket, d).sketch.add(size, w);
    }

    if (s.parent_span_id.empty()) continue;
    auto p = by_id.find(s.trace_id + s.parent_span_id);
    if (p == by_id.end() || ids[p->second].key.empty()) continue;
    const auto& parent = request.spans[p->second];
    const std::string& caller = ids[p->second].key;
    AggValue& cv = slot(batch, AggKind::kCallSite, id.key, caller, bucket, d);
    cv.sketch.add(dur, w);
    if (edge_parents.insert(id.key + '\0' + caller + '\0' + s.trace_id + parent.span_id).second) {
      cv.x1 += weightOf(parent);
      double input = 0;
      if (attrNumber(parent.attributes, "perfhat.input.size", input)) {
        cv.x2 += input * weightOf(parent);
        cv.x3 += weightOf(parent);
      }
    }
  }
  return st;
}

}  // namespace perfhat::handler
