#include "feedback-handler/sync/export_json.h"

#include <algorithm>
#include <iterator>

#include <nlohmann/json.hpp>

#include "common/json_number.h"
#include "common/json_parse.h"
#include "feedback-handler/ingest/intake_limits.h"
#include "feedback-handler/util/base64.h"

namespace perfhat::handler {

using nlohmann::json;

namespace {

// The export's members of counted rows without a sketch (dropped, traffic, sampled), each in a
// member of its own so that handlers predating it ignore it: which key fields a row has, and the
// names and bounds of its up to three extras.
struct CountedMember {
  const char* name;
  AggKind kind;
  bool has_key;  // the function key (required)
  bool has_sub;  // a bounded dimension-like sub key
  const char* x1;
  const char* x2;
  double x2_max;
  const char* x3;  // nullptr: none
};

constexpr CountedMember kCountedMembers[] = {
    {"dropped", AggKind::kDropped, false, false, "calls", "spans", DDSketch::kMaxCount, "rows"},
    {"traffic", AggKind::kTraffic, false, true, "requests", "records", DDSketch::kMaxCount,
     nullptr},
    {"sampled", AggKind::kSampled, true, false, "calls", "records", DDSketch::kMaxSum, nullptr},
};

// The columns of every aggregate row: its time bucket and whose it is.
json rowIdentity(const AggKey& k) {
  return {{"bucket", k.bucket},
          {"service", k.service},
          {"version", k.version},
          {"env", k.env},
          {"origin", k.origin}};
}

// Reads the dimensions of a row; false when one is over the intake limit.
bool readDimensions(const json& d, AggKey& k);

}  // namespace

std::string serializeExport(const ExportPage& page) {
  json aggs = json::array();
  // The counted rows without a sketch, in members of their own (kCountedMembers).
  json counted[std::size(kCountedMembers)];
  for (json& c : counted) c = json::array();
  for (const auto& [k, v] : page.rows.aggregates) {
    const auto kind = k.kind;  // clang 14 does not capture structured bindings
    const auto m = std::find_if(std::begin(kCountedMembers), std::end(kCountedMembers),
                                [kind](const CountedMember& c) { return c.kind == kind; });
    if (m != std::end(kCountedMembers)) {
      json row = rowIdentity(k);
      if (m->has_key) row["key"] = k.key;
      if (m->has_sub) row["sub"] = k.sub;
      row[m->x1] = v.x1;
      row[m->x2] = v.x2;
      if (m->x3 != nullptr) row[m->x3] = v.x3;
      counted[m - std::begin(kCountedMembers)].push_back(std::move(row));
      continue;
    }
    json row = rowIdentity(k);
    row["kind"] = std::string(1, static_cast<char>(k.kind));
    row["key"] = k.key;
    row["sub"] = k.sub;
    row["sketch"] = base64Encode(v.sketch.serialize());
    row["x1"] = v.x1;
    row["x2"] = v.x2;
    row["x3"] = v.x3;
    row["line"] = v.line;
    aggs.push_back(std::move(row));
  }
  json fns = json::array();
  for (const auto& [key, f] : page.rows.functions) {
    fns.push_back({{"key", key},
                   {"mangled", f.mangled},
                   {"file", f.file},
                   {"line", f.line},
                   {"last_seen_ns", f.last_seen_ns}});
  }
  json hosts = json::array();
  for (const auto& [kh, seen] : page.rows.hosts) {
    hosts.push_back({{"key", kh.first}, {"host", kh.second}, {"last_seen_ns", seen}});
  }
  json doc = {{"cursor", std::to_string(page.cursor)},
              {"more", page.more},
              {"aggregates", std::move(aggs)},
              {"functions", std::move(fns)},
              {"hosts", std::move(hosts)}};
  // Each in a member of its own: handlers that predate one ignore it.
  for (size_t i = 0; i < std::size(kCountedMembers); ++i)
    doc[kCountedMembers[i].name] = std::move(counted[i]);
  return doc.dump(-1, ' ', false, json::error_handler_t::replace);
}

namespace {

const json kEmptyArray = json::array();

// doc[name] as an array without copying it ([] when absent).
const json& arrayAt(const json& doc, const char* name) {
  auto it = doc.find(name);
  if (it == doc.end() || it->is_null()) return kEmptyArray;
  if (!it->is_array())
    throw ExportFormatError(std::string("export: \"") + name + "\" must be an array");
  return *it;
}

// A string member no longer than `max` bytes; false (the row is left out) when it is longer.
bool boundedString(const json& o, const char* name, size_t max, std::string& out,
                   bool required = false) {
  auto it = o.find(name);
  if (it == o.end() || it->is_null()) {
    if (required) throw ExportFormatError(std::string("export: \"") + name + "\" is missing");
    out.clear();
    return true;
  }
  const auto& s = it->get_ref<const std::string&>();  // type_error when not a string
  if (s.size() > max) return false;
  out = s;
  return true;
}

bool readDimensions(const json& d, AggKey& k) {
  using L = IntakeLimits;
  return boundedString(d, "service", L::kMaxDimensionBytes, k.service) &&
         boundedString(d, "version", L::kMaxDimensionBytes, k.version) &&
         boundedString(d, "env", L::kMaxDimensionBytes, k.env) &&
         boundedString(d, "origin", L::kMaxDimensionBytes, k.origin);
}

// One member's rows into `page` (rows over the intake limits are counted as rejected).
void readCountedMember(const json& doc, const CountedMember& m, ExportPage& page) {
  using L = IntakeLimits;
  for (const auto& d : arrayAt(doc, m.name)) {
    AggKey k;
    k.kind = m.kind;
    if ((m.has_key && !boundedString(d, "key", L::kMaxKeyBytes, k.key, true)) ||
        !readDimensions(d, k) ||
        (m.has_sub && !boundedString(d, "sub", L::kMaxDimensionBytes, k.sub))) {
      ++page.rejected;
      continue;
    }
    k.bucket = integerFrom<int64_t>(d.at("bucket"));
    AggValue v;
    v.x1 = AggValue::clampExtra(d.value(m.x1, 0.0), DDSketch::kMaxCount);
    v.x2 = AggValue::clampExtra(d.value(m.x2, 0.0), m.x2_max);
    if (m.x3 != nullptr) v.x3 = AggValue::clampExtra(d.value(m.x3, 0.0), DDSketch::kMaxCount);
    page.rows.aggregates[std::move(k)] = std::move(v);
  }
}

}  // namespace

ExportPage parseExport(std::string_view text) {
  // Nesting-limited (common/json_parse.h): a 200,000-deep export crashed the local handler.
  const JsonParse parsed = parseJson(text);
  if (!parsed.ok()) throw ExportFormatError("export: " + parsed.error);
  const json& doc = parsed.value;
  if (!doc.is_object()) throw ExportFormatError("export: not a JSON object");
  ExportPage page;
  using L = IntakeLimits;
  try {
    page.cursor = std::stoull(doc.at("cursor").get<std::string>());
    page.more = doc.value("more", false);
    // Rows beyond the intake limits (oversized names) are left out and counted, not stored: an
    // upstream's page is applied as a whole, so refusing it would stop the sync for good.
    for (const auto& a : arrayAt(doc, "aggregates")) {
      AggKey k;
      std::string kind = a.at("kind").get<std::string>();
      if (kind != "f" && kind != "c" && kind != "l" && kind != "s" && kind != "t") {
        throw ExportFormatError("export: unknown aggregate kind '" + kind.substr(0, 16) + "'");
      }
      k.kind = static_cast<AggKind>(kind[0]);
      if (!boundedString(a, "key", L::kMaxKeyBytes, k.key, true) ||
          !boundedString(a, "sub", L::kMaxKeyBytes, k.sub) || !readDimensions(a, k)) {
        ++page.rejected;
        continue;
      }
      k.bucket = integerFrom<int64_t>(a.at("bucket"));
      auto blob = base64Decode(a.at("sketch").get<std::string>());
      if (!blob) throw ExportFormatError("export: sketch is not valid base64");
      AggValue v;
      v.sketch = DDSketch::deserialize(*blob);  // out-of-range totals read clamped
      // Extras as the store reads them: NaN, negatives and overflow do not get in.
      v.x1 = AggValue::clampExtra(a.value("x1", 0.0), DDSketch::kMaxCount);
      v.x2 = AggValue::clampExtra(a.value("x2", 0.0), DDSketch::kMaxSum);
      v.x3 = AggValue::clampExtra(a.value("x3", 0.0), DDSketch::kMaxCount);
      v.line = integerOr(a, "line", 0);
      page.rows.aggregates[std::move(k)] = std::move(v);
    }
    for (const auto& m : kCountedMembers) readCountedMember(doc, m, page);
    for (const auto& f : arrayAt(doc, "functions")) {
      std::string key;
      FunctionInfo info;
      if (!boundedString(f, "key", L::kMaxKeyBytes, key, true) ||
          !boundedString(f, "mangled", L::kMaxKeyBytes, info.mangled) ||
          !boundedString(f, "file", L::kMaxPathBytes, info.file)) {
        ++page.rejected;
        continue;
      }
      info.line = integerOr(f, "line", 0);
      info.last_seen_ns = integerOr(f, "last_seen_ns", int64_t{0});
      page.rows.functions[std::move(key)] = std::move(info);
    }
    for (const auto& h : arrayAt(doc, "hosts")) {
      std::string key, host;
      if (!boundedString(h, "key", L::kMaxKeyBytes, key, true) ||
          !boundedString(h, "host", L::kMaxDimensionBytes, host, true)) {
        ++page.rejected;
        continue;
      }
      page.rows.hosts[{std::move(key), std::move(host)}] = integerOr(h, "last_seen_ns", int64_t{0});
    }
  } catch (const json::exception& e) {
    throw ExportFormatError(std::string("export: ") + e.what());
  } catch (const DDSketchError& e) {
    throw ExportFormatError(std::string("export: ") + e.what());
  } catch (const std::logic_error& e) {  // stoull
    throw ExportFormatError(std::string("export: bad cursor: ") + e.what());
  }
  return page;
}

}  // namespace perfhat::handler
