#include "server/sarif.h"

#include <map>

#include "server/lsp/protocol.h"

namespace perfhat::server {
namespace {

using nlohmann::json;

const char* level(features::Severity s) {
  switch (s) {
    case features::Severity::Error:
      return "error";
    case features::Severity::Warning:
      return "warning";
    case features::Severity::Information:
    case features::Severity::Hint:
      return "note";
  }
  return "note";
}

const std::map<std::string, std::string>& ruleTexts() {
  static const std::map<std::string, std::string> kRules = {
      {"perfhat.regression", "Predicted performance regression against production data"},
      {"perfhat.possible-regression",
       "Possible performance regression (the range's top crosses "
       "the threshold)"},
      {"perfhat.possibly-new", "A call that may already run in production"},
      {"perfhat.improvement", "Predicted performance improvement"},
      {"perfhat.hotspot", "Hot spot in production"},
      {"perfhat.parse", "The file could not be parsed completely"},
  };
  return kRules;
}

}  // namespace

json toSarif(const std::vector<SarifFile>& files, const std::string& version) {
  std::map<std::string, int> rule_index;
  json rules = json::array();
  json results = json::array();
  for (const auto& f : files) {
    for (const auto& d : f.diagnostics) {
      std::string id = d.code.empty() ? "perfhat" : d.code;
      auto [it, added] = rule_index.emplace(id, static_cast<int>(rules.size()));
      if (added) {
        auto text = ruleTexts().find(id);
        rules.push_back(
            {{"id", id},
             {"shortDescription", {{"text", text == ruleTexts().end() ? id : text->second}}}});
      }
      results.push_back(
          {{"ruleId", id},
           {"ruleIndex", it->second},
           {"level", level(d.severity)},
           {"message", {{"text", d.message}}},
           {"locations", json::array({{{"physicalLocation",
                                        {{"artifactLocation", {{"uri", lsp::pathToUri(f.path)}}},
                                         {"region",
                                          {{"startLine", d.range.start.line + 1},
                                           {"startColumn", d.range.start.column + 1},
                                           {"endLine", d.range.end.line + 1},
                                           {"endColumn", d.range.end.column + 1}}}}}}})}});
    }
  }
  return {{"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
          {"version", "2.1.0"},
          {"runs",
           json::array(
               {{{"tool",
                  {{"driver", {{"name", "perfhat-lsp"}, {"version", version}, {"rules", rules}}}}},
                 {"columnKind", "utf8CodeUnits"},
                 {"results", results}}})}};
}

}  // namespace perfhat::server
