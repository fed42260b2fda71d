#include "feedback-handler/ingest/aggregator.h"

#include <algorithm>
#include <cmath>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "feedback-handler/ingest/intake_limits.h"
#include "feedback-handler/ingest/sampled_rows.h"
#include "feedback-handler/ingest/span_key.h"
#include "feedback-handler/ingest/variant_traffic.h"

namespace perfhat::handler {
namespace {

using otlp::attrNumber;
using otlp::attrString;

}  // namespace

ResourceDims resourceDims(const otlp::Attributes& r) {
  ResourceDims d;
  d.service = attrString(r, "service.name");
  d.version = attrString(r, "service.version");
  d.env = attrString(r, "deployment.environment.name");
  if (d.env.empty()) d.env = attrString(r, "deployment.environment");
  d.host = attrString(r, "host.name");
  for (std::string* v : {&d.service, &d.version, &d.env, &d.host}) *v = sanitizeUtf8(std::move(*v));
  // Checked where they are used (trafficSub): a bad one means no traffic row, nothing else.
  d.release = attrString(r, "perfhat.release");
  d.variant = attrString(r, "perfhat.variant");
  d.replica = attrString(r, "perfhat.replica");
  return d;
}

namespace {

double weightOf(const otlp::Span& s) {
  double w = 1;
  if (!attrNumber(s.attributes, "perfhat.sampling.weight", w) &&
      !attrNumber(s.attributes, "sampling.weight", w)) {
    return 1;
  }
  // screenSpans refuses weights out of range; the clamp keeps totals finite regardless.
  return std::isfinite(w) && w > 0 ? std::min(w, IntakeLimits::kMaxSamplingWeight) : 1;
}

uint64_t mix(uint64_t a, uint64_t b) {
  return (a ^ (b + 0x9e3779b97f4a7c15ULL + (a << 6) + (a >> 2))) * 0xff51afd7ed558ccdULL;
}

// Aggregates of one request keyed by small integers (interned key ids, resource index): the
// per-span work is integer hashing; strings are built once per distinct row at the end.
struct LocalKey {
  AggKind kind;
  uint32_t key;  // interned function key
  int64_t sub;   // caller key id (call sites), loop ordinal (loops), else 0
  int64_t bucket;
  uint32_t resource;  // index into the request's resources (== size: none)
  bool operator==(const LocalKey&) const = default;
};
struct LocalKeyHash {
  size_t operator()(const LocalKey& k) const noexcept {
    uint64_t h = mix(static_cast<uint64_t>(k.kind), k.key);
    h = mix(h, static_cast<uint64_t>(k.sub));
    h = mix(h, static_cast<uint64_t>(k.bucket));
    return static_cast<size_t>(mix(h, k.resource));
  }
};
// (callee, caller, parent span) for distinct parents per edge.
struct EdgeParent {
  uint32_t callee, caller, parent;
  bool operator==(const EdgeParent&) const = default;
};
struct EdgeParentHash {
  size_t operator()(const EdgeParent& e) const noexcept {
    return static_cast<size_t>(mix(mix(e.callee, e.caller), e.parent));
  }
};

AggValue& slot(Batch& b, AggKind kind, const std::string& key, std::string sub, int64_t bucket,
               const std::string& service, const std::string& version, const std::string& env) {
  return b.aggregates
      .try_emplace(AggKey{kind, key, std::move(sub), bucket, service, version, env, ""})
      .first->second;
}

void mergeInto(Batch& b, AggKey k, AggValue&& v) {
  auto [it, inserted] = b.aggregates.try_emplace(std::move(k));
  if (inserted) {
    it->second = std::move(v);
  } else {
    it->second.merge(v);
  }
}

// One request's aggregation, a step a member: aggregate() below runs them in order. The
// constructor identifies every span and interns its key; addSpan() adds a span's rows;
// exchange() links call-site edges across requests through the index of recent spans;
// creditLoopChildren() and addSelfTimes() compute self times; into() merges it all into the batch.
struct RequestAggregation {
  RequestAggregation(const otlp::ExportRequest& request, SpanIndex* recent);
  double weight(size_t i);
  void addSpan(size_t i);
  void exchange(Batch& batch);
  void creditLoopChildren();
  void addSelfTimes();
  void into(Batch& batch);

  const otlp::ExportRequest& request;
  SpanIndex* recent;
  IngestStats st;
  std::vector<ResourceDims> res;
  uint32_t none = 0;  // the resource index of spans with an out-of-range one
  size_t n = 0;
  std::vector<SpanIdentity> ids;
  std::vector<uint32_t> key_of;        // interned key id per span
  std::vector<std::string_view> keys;  // id → key (views into `ids`)
  std::unordered_map<std::string_view, uint32_t> key_ids;
  std::vector<bool> is_loop;
  std::unordered_map<SpanRef, uint32_t, SpanRefHash> by_id;  // to find parents in the request
  std::unordered_map<LocalKey, AggValue, LocalKeyHash> local;
  TrafficCounter traffic;
  std::unordered_set<EdgeParent, EdgeParentHash> edge_parents;
  std::vector<FunctionInfo> infos;
  std::unordered_map<uint64_t, int64_t> hosts;  // (key id, resource) → last seen
  std::vector<std::pair<SpanRef, SpanIndex::Child>> orphans;
  // Σ durations of each span's direct children (identified calls, not loop records) found so
  // far: in this request, then waiting in the index. Its self time is its duration minus this.
  std::vector<double> children_ns;
  std::vector<double> weights;
  std::vector<bool> weighed;
};

RequestAggregation::RequestAggregation(const otlp::ExportRequest& request, SpanIndex* recent)
    : request(request), recent(recent) {
  res.reserve(request.resources.size() + 1);
  for (const auto& r : request.resources) res.push_back(resourceDims(r));
  res.emplace_back();  // spans with an out-of-range resource index
  none = static_cast<uint32_t>(res.size() - 1);

  n = request.spans.size();
  ids.resize(n);
  key_of.assign(n, UINT32_MAX);
  is_loop.assign(n, false);
  by_id.reserve(n);
  key_ids.reserve(64);
  for (size_t i = 0; i < n; ++i) {
    const auto& s = request.spans[i];
    ids[i] = identifySpan(s);
    // A normalized key may be longer than what it was made of (a demangled name): bounded too.
    if (ids[i].key.size() > IntakeLimits::kMaxKeyBytes) ids[i] = SpanIdentity{};
    if (ids[i].mangled.size() > IntakeLimits::kMaxKeyBytes) ids[i].mangled.clear();
    if (ids[i].file.size() > IntakeLimits::kMaxPathBytes) ids[i].file.clear();
    is_loop[i] = otlp::findAttr(s.attributes, "perfhat.loop.ordinal") != nullptr;
    by_id.emplace(SpanRef::of(s.trace_id, s.span_id), static_cast<uint32_t>(i));
    if (ids[i].key.empty()) continue;
    auto [it, inserted] = key_ids.try_emplace(ids[i].key, static_cast<uint32_t>(keys.size()));
    if (inserted) keys.push_back(ids[i].key);
    key_of[i] = it->second;
  }

  local.reserve(keys.size() * 3);
  infos.resize(keys.size());
  children_ns.assign(n, 0);
  weights.assign(n, 1);
  weighed.assign(n, false);
}

double RequestAggregation::weight(size_t i) {
  if (!weighed[i]) {
    weights[i] = weightOf(request.spans[i]);
    weighed[i] = true;
  }
  return weights[i];
}

void RequestAggregation::addSpan(size_t i) {
  const auto& s = request.spans[i];
  const SpanIdentity& id = ids[i];
  if (id.key.empty()) {
    ++st.skipped;
    return;
  }
  ++st.spans;
  const uint32_t kid = key_of[i];
  const uint32_t r =
      s.resource < request.resources.size() ? static_cast<uint32_t>(s.resource) : none;
  const double w = weight(i);
  const auto start = static_cast<int64_t>(s.start_unix_nano);
  const int64_t bucket = start / kBucketNs;
  const double dur = static_cast<double>(s.end_unix_nano - s.start_unix_nano);
  const auto end = static_cast<int64_t>(s.end_unix_nano);

  FunctionInfo& fi = infos[kid];
  if (fi.mangled.empty()) fi.mangled = id.mangled;
  if (!is_loop[i]) {
    if (!id.file.empty()) fi.file = id.file;
    if (id.line) fi.line = id.line;
  }
  fi.last_seen_ns = std::max(fi.last_seen_ns, end);
  if (!res[r].host.empty()) {
    int64_t& seen = hosts[(static_cast<uint64_t>(kid) << 32) | r];
    seen = std::max(seen, end);
  }

  double iterations = 0;
  if (attrNumber(s.attributes, "perfhat.loop.iterations", iterations)) {
    double ordinal = 0, line = 0;
    attrNumber(s.attributes, "perfhat.loop.ordinal", ordinal);
    attrNumber(s.attributes, "perfhat.loop.line", line);
    AggValue& lv = local[{
        AggKind::kLoop, kid,
        static_cast<int64_t>(ordinal > 0 ? std::min(ordinal, IntakeLimits::kMaxLoopOrdinal) : 0.0),
        bucket, r}];
    lv.sketch.add(iterations, w);
    if (line > 0 && line < 1e9) lv.line = static_cast<int>(line);
  }
  if (is_loop[i]) return;  // a loop-site record, not a call of the function

  traffic.add(r, bucket, s.kind == 2 /* SERVER: a request root */, w);
  AggValue& fv = local[{AggKind::kFunction, kid, 0, bucket, r}];
  fv.sketch.add(dur, w);
  if (s.status == otlp::StatusCode::kError) AggValue::addCount(fv.x1, w);
  if (w != 1) noteSampled(local[{AggKind::kSampled, kid, 0, bucket, r}], w, 1);

  double size = 0;
  if (attrNumber(s.attributes, "perfhat.result.size", size)) {
    local[{AggKind::kResultSize, kid, 0, bucket, r}].sketch.add(size, w);
  }

  if (s.parent_span_id.empty()) return;
  auto p = by_id.find(SpanRef::of(s.trace_id, s.parent_span_id));
  if (p == by_id.end()) {
    if (recent) {
      const ResourceDims& d = res[r];
      orphans.emplace_back(SpanRef::of(s.trace_id, s.parent_span_id),
                           SpanIndex::Child{id.key, d.service, d.version, d.env, bucket, dur, w});
    }
    return;
  }
  const uint32_t pi = p->second;
  if (key_of[pi] == UINT32_MAX) return;
  children_ns[pi] += dur;
  const uint32_t caller = key_of[pi];
  AggValue& cv = local[{AggKind::kCallSite, kid, caller, bucket, r}];
  cv.sketch.add(dur, w);
  if (edge_parents.insert({kid, caller, pi}).second) {
    const double pw = weight(pi);
    AggValue::addCount(cv.x1, pw);
    double input = 0;
    if (attrNumber(request.spans[pi].attributes, "perfhat.input.size", input)) {
      AggValue::addSum(cv.x2, input * pw);
      AggValue::addCount(cv.x3, pw);
    }
  }
}

// Every identified span may parent a child exported later; its edges of this request already
// counted it once per callee.
void RequestAggregation::exchange(Batch& batch) {
  std::vector<std::pair<SpanRef, SpanIndex::Parent>> parents;
  std::unordered_map<uint32_t, size_t> parent_slot;  // span index → position in `parents`
  parents.reserve(st.spans);
  for (size_t i = 0; i < n; ++i) {
    if (key_of[i] == UINT32_MAX) continue;
    const auto& s = request.spans[i];
    SpanIndex::Parent pa{ids[i].key, weight(i), std::nullopt, {}};
    double input = 0;
    if (attrNumber(s.attributes, "perfhat.input.size", input)) pa.input_size = input;
    parent_slot.emplace(static_cast<uint32_t>(i), parents.size());
    parents.emplace_back(SpanRef::of(s.trace_id, s.span_id), std::move(pa));
  }
  for (const EdgeParent& e : edge_parents) {
    auto& credited = parents[parent_slot.at(e.parent)].second.credited;
    const uint64_t h = SpanIndex::keyHash(keys[e.callee]);
    if (std::find(credited.begin(), credited.end(), h) == credited.end()) credited.push_back(h);
  }
  for (auto& e : recent->exchange(std::move(parents), std::move(orphans))) {
    const SpanIndex::Child& c = e.child;
    AggValue& cv =
        slot(batch, AggKind::kCallSite, c.key, e.caller, c.bucket, c.service, c.version, c.env);
    cv.sketch.add(c.duration_ns, c.weight);
    if (e.adopted) {  // a child of an earlier request whose parent came in this one
      if (auto p = by_id.find(e.parent); p != by_id.end()) children_ns[p->second] += c.duration_ns;
    }
    if (e.count_parent) {
      AggValue::addCount(cv.x1, e.parent_weight);
      if (e.parent_input_size) {
        AggValue::addSum(cv.x2, *e.parent_input_size * e.parent_weight);
        AggValue::addCount(cv.x3, e.parent_weight);
      }
    }
  }
}

// Calls made inside a loop record (a span with perfhat.loop.ordinal, whose call-site rows name
// the enclosing function as caller) are children of the function's span for its self time too.
void RequestAggregation::creditLoopChildren() {
  for (size_t i = 0; i < n; ++i) {
    if (!is_loop[i] || children_ns[i] == 0 || request.spans[i].parent_span_id.empty()) continue;
    const auto& s = request.spans[i];
    auto p = by_id.find(SpanRef::of(s.trace_id, s.parent_span_id));
    if (p != by_id.end() && !is_loop[p->second]) children_ns[p->second] += children_ns[i];
  }
}

// Self time, once per call. Children exported after their parent (an SDK that exports spans
// out of end order) are not subtracted here; the mean self time, read from the call-site
// sums, still counts them (dynamic/call_graph.h).
void RequestAggregation::addSelfTimes() {
  for (size_t i = 0; i < n; ++i) {
    if (key_of[i] == UINT32_MAX || is_loop[i]) continue;
    const auto& s = request.spans[i];
    const double dur = static_cast<double>(s.end_unix_nano - s.start_unix_nano);
    const uint32_t r =
        s.resource < request.resources.size() ? static_cast<uint32_t>(s.resource) : none;
    local[{AggKind::kSelfTime, key_of[i], 0, static_cast<int64_t>(s.start_unix_nano) / kBucketNs,
           r}]
        .sketch.add(std::max(0.0, dur - children_ns[i]), weight(i));
  }
}

void RequestAggregation::into(Batch& batch) {
  traffic.into(batch, res);
  for (auto& [k, v] : local) {
    const ResourceDims& d = res[k.resource];
    std::string sub = k.kind == AggKind::kCallSite ? std::string(keys[static_cast<size_t>(k.sub)])
                      : k.kind == AggKind::kLoop   ? std::to_string(k.sub)
                                                   : std::string();
    mergeInto(batch,
              AggKey{k.kind, std::string(keys[k.key]), std::move(sub), k.bucket, d.service,
                     d.version, d.env, ""},
              std::move(v));
  }
  for (size_t k = 0; k < keys.size(); ++k) {
    FunctionInfo& g = infos[k];
    auto [it, inserted] = batch.functions.try_emplace(std::string(keys[k]), std::move(g));
    if (inserted) continue;
    FunctionInfo& f = it->second;
    if (f.mangled.empty()) f.mangled = g.mangled;
    if (!g.file.empty()) f.file = g.file;
    if (g.line) f.line = g.line;
    f.last_seen_ns = std::max(f.last_seen_ns, g.last_seen_ns);
  }
  for (const auto& [kr, seen] : hosts) {
    int64_t& t = batch.hosts[{std::string(keys[kr >> 32]), res[kr & 0xffffffffu].host}];
    t = std::max(t, seen);
  }
}

}  // namespace

IngestStats aggregate(const otlp::ExportRequest& request, Batch& batch, SpanIndex* recent) {
  RequestAggregation a(request, recent);
  for (size_t i = 0; i < a.n; ++i) a.addSpan(i);
  if (recent) a.exchange(batch);
  a.creditLoopChildren();
  a.addSelfTimes();
  a.into(batch);
  return a.st;
}

}  // namespace perfhat::handler
