#include "feedback-handler/sync/export_json.h"

#include <nlohmann/json.hpp>

#include "common/json_number.h"
#include "feedback-handler/util/base64.h"

namespace perfhat::handler {

using nlohmann::json;

std::string serializeExport(const ExportPage& page) {
  json aggs = json::array();
  for (const auto& [k, v] : page.rows.aggregates) {
    aggs.push_back({{"kind", std::string(1, static_cast<char>(k.kind))},
                    {"key", k.key},
                    {"sub", k.sub},
                    {"bucket", k.bucket},
                    {"service", k.service},
                    {"version", k.version},
                    {"env", k.env},
                    {"origin", k.origin},
                    {"sketch", base64Encode(v.sketch.serialize())},
                    {"x1", v.x1},
                    {"x2", v.x2},
                    {"x3", v.x3},
                    {"line", v.line}});
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
  return json{{"cursor", std::to_string(page.cursor)},
              {"more", page.more},
              {"aggregates", std::move(aggs)},
              {"functions", std::move(fns)},
              {"hosts", std::move(hosts)}}
      .dump(-1, ' ', false, json::error_handler_t::replace);
}

ExportPage parseExport(std::string_view text) {
  json doc = json::parse(text.begin(), text.end(), nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) throw ExportFormatError("export: not a JSON object");
  ExportPage page;
  try {
    page.cursor = std::stoull(doc.at("cursor").get<std::string>());
    page.more = doc.value("more", false);
    for (const auto& a : doc.value("aggregates", json::array())) {
      AggKey k;
      std::string kind = a.at("kind").get<std::string>();
      if (kind != "f" && kind != "c" && kind != "l" && kind != "s") {
        throw ExportFormatError("export: unknown aggregate kind '" + kind + "'");
      }
      k.kind = static_cast<AggKind>(kind[0]);
      k.key = a.at("key").get<std::string>();
      k.sub = a.value("sub", "");
      k.bucket = integerFrom<int64_t>(a.at("bucket"));
      k.service = a.value("service", "");
      k.version = a.value("version", "");
      k.env = a.value("env", "");
      k.origin = a.value("origin", "");
      auto blob = base64Decode(a.at("sketch").get<std::string>());
      if (!blob) throw ExportFormatError("export: sketch is not valid base64");
      AggValue v;
      v.sketch = DDSketch::deserialize(*blob);
      v.x1 = a.value("x1", 0.0);
      v.x2 = a.value("x2", 0.0);
      v.x3 = a.value("x3", 0.0);
      v.line = integerOr(a, "line", 0);
      page.rows.aggregates[std::move(k)] = std::move(v);
    }
    for (const auto& f : doc.value("functions", json::array())) {
      page.rows.functions[f.at("key").get<std::string>()] =
          FunctionInfo{f.value("mangled", ""), f.value("file", ""), integerOr(f, "line", 0),
                       integerOr(f, "last_seen_ns", int64_t{0})};
    }
    for (const auto& h : doc.value("hosts", json::array())) {
      page.rows.hosts[{h.at("key").get<std::string>(), h.at("host").get<std::string>()}] =
          integerOr(h, "last_seen_ns", int64_t{0});
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
