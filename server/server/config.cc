#include "server/server/config.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <type_traits>

#include "common/json_number.h"
#include "common/json_parse.h"
#include "server/features/options_json.h"

namespace perfhat::server {
namespace {

using nlohmann::json;

template <typename T>
void read(const json& j, const char* key, T& out, std::vector<std::string>& warnings,
          const std::string& where) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return;
  try {
    T v = valueFrom<T>(*it);
    if constexpr (std::is_arithmetic_v<T>) {
      if (v < 0) {
        warnings.push_back("config: \"" + where + key + "\" must not be negative");
        return;
      }
    }
    out = v;
  } catch (const json::exception&) {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      if (it->is_number()) {
        warnings.push_back("config: \"" + where + key + "\" must be a whole number in range, not " +
                           it->dump());
        return;
      }
    }
    warnings.push_back("config: \"" + where + key + "\" has the wrong type (" +
                       std::string(it->type_name()) + ")");
  }
}

}  // namespace

void applyJson(Config& cfg, const json& j, std::vector<std::string>& warnings) {
  if (!j.is_object()) {
    if (!j.is_null()) warnings.push_back("config: settings must be a JSON object");
    return;
  }
  read(j, "feedbackFile", cfg.feedback_file, warnings, "");
  read(j, "handler", cfg.handler_url, warnings, "");
  read(j, "token", cfg.token, warnings, "");
  read(j, "compileCommands", cfg.compile_commands, warnings, "");
  read(j, "budgetStatus", cfg.budget_status, warnings, "");
  read(j, "budgetPins", cfg.budget_pins, warnings, "");
  read(j, "budgetService", cfg.budget_service, warnings, "");
  if (auto f = j.find("features"); f != j.end() && !f->is_null()) {
    try {
      features::Options o = cfg.features;
      features::from_json(*f, o);
      cfg.features = o;
    } catch (const std::exception& e) {
      warnings.push_back(std::string("config: features: ") + e.what());
    }
  }
  if (auto p = j.find("profile"); p != j.end() && !p->is_null()) {
    if (*p == "design")
      cfg.features.profile = features::Profile::Design;
    else if (*p == "debug")
      cfg.features.profile = features::Profile::Debug;
    else
      warnings.push_back("config: \"profile\" must be \"design\" or \"debug\"");
  }
  if (auto c = j.find("cache"); c != j.end() && c->is_object()) {
    size_t max_entries = cfg.cache.max_entries;
    int64_t ttl = cfg.cache.ttl.count();
    read(*c, "maxEntries", max_entries, warnings, "cache.");
    read(*c, "ttlSeconds", ttl, warnings, "cache.");
    cfg.cache = {max_entries, std::chrono::seconds(ttl)};
  }
  if (auto h = j.find("http"); h != j.end() && h->is_object()) {
    read(*h, "connectTimeoutMs", cfg.connect_timeout_ms, warnings, "http.");
    read(*h, "readTimeoutMs", cfg.read_timeout_ms, warnings, "http.");
    read(*h, "totalTimeoutMs", cfg.total_timeout_ms, warnings, "http.");
    read(*h, "maxResponseMb", cfg.max_response_mb, warnings, "http.");
    read(*h, "fetchWaitMs", cfg.fetch_wait_ms, warnings, "http.");
  }
  if (auto d = j.find("debounce"); d != j.end() && d->is_object()) {
    read(*d, "minMs", cfg.debounce_min_ms, warnings, "debounce.");
    read(*d, "maxMs", cfg.debounce_max_ms, warnings, "debounce.");
    read(*d, "ratio", cfg.debounce_ratio, warnings, "debounce.");
    if (cfg.debounce_max_ms < cfg.debounce_min_ms) cfg.debounce_max_ms = cfg.debounce_min_ms;
  }
  read(j, "changesPollSeconds", cfg.changes_poll_s, warnings, "");
  int parsed = cfg.max_parsed_documents;
  read(j, "maxParsedDocuments", parsed, warnings, "");
  if (parsed >= 1)
    cfg.max_parsed_documents = parsed;
  else
    warnings.push_back("config: \"maxParsedDocuments\" must be at least 1");
  if (auto a = j.find("analysis"); a != j.end() && a->is_object()) cfg.analysis.merge_patch(*a);
}

Config ConfigLayers::resolve(std::vector<std::string>* warnings) const {
  std::vector<std::string> local;
  std::vector<std::string>& w = warnings ? *warnings : local;
  Config cfg;
  // Each layer is applied in turn rather than merged first, so a bad value in a high layer
  // keeps the lower layer's value instead of the default.
  for (const json* layer : {&project, &client, &env, &cli}) applyJson(cfg, *layer, w);
  return cfg;
}

json envLayer(const std::function<const char*(const char*)>& getenv_fn) {
  json j = json::object();
  auto str = [&](const char* var, const char* key) {
    if (const char* v = getenv_fn(var); v && *v) j[key] = v;
  };
  str("PERFHAT_FEEDBACK_FILE", "feedbackFile");
  str("PERFHAT_HANDLER", "handler");
  str("PERFHAT_TOKEN", "token");
  str("PERFHAT_PROFILE", "profile");
  str("PERFHAT_COMPILE_COMMANDS", "compileCommands");
  str("PERFHAT_BUDGET_STATUS", "budgetStatus");
  str("PERFHAT_BUDGET_PINS", "budgetPins");
  str("OTEL_SERVICE_NAME", "budgetService");
  auto num = [&](const char* var, const char* section, const char* key) {
    const char* v = getenv_fn(var);
    if (!v || !*v) return;
    char* end = nullptr;
    long long n = std::strtoll(v, &end, 10);
    // A malformed number is passed on as a string so applyJson reports it by name.
    json& at = section ? j[section] : j;
    if (end && *end == '\0')
      at[key] = n;
    else
      at[key] = v;
  };
  num("PERFHAT_CACHE_MAX_ENTRIES", "cache", "maxEntries");
  num("PERFHAT_CACHE_TTL_S", "cache", "ttlSeconds");
  num("PERFHAT_MAX_PARSED_DOCUMENTS", nullptr, "maxParsedDocuments");
  return j;
}

json withAbsolutePaths(json layer, const std::string& base) {
  if (base.empty() || !layer.is_object()) return layer;
  auto absolute = [&](json& obj, const char* key) {
    auto it = obj.find(key);
    if (it == obj.end() || !it->is_string()) return;  // a wrong type is reported by applyJson
    const std::string path = it->get<std::string>();
    if (!path.empty() && std::filesystem::path(path).is_relative())
      *it = (std::filesystem::path(base) / path).lexically_normal().string();
  };
  absolute(layer, "compileCommands");
  absolute(layer, "feedbackFile");
  if (auto a = layer.find("analysis"); a != layer.end() && a->is_object()) {
    absolute(*a, "compile_commands");
    absolute(*a, "compileCommands");
  }
  return layer;
}

json loadProjectFile(const std::string& root, std::optional<std::string>* error) {
  if (root.empty()) return json::object();
  std::string path = root + "/.perfhat.json";
  std::ifstream in(path);
  if (!in) return json::object();
  std::stringstream ss;
  ss << in.rdbuf();
  JsonParse parsed = parseJson(ss.str());
  if (!parsed.ok() || !parsed.value.is_object()) {
    if (error)
      *error = path + " is not a valid JSON object" +
               (parsed.ok() ? std::string() : " (" + parsed.error + ")") + "; ignoring it";
    return json::object();
  }
  return std::move(parsed.value);
}

json clientSettings(const json& settings) {
  if (settings.is_object()) {
    if (auto p = settings.find("perfhat"); p != settings.end() && p->is_object()) return *p;
    return settings;
  }
  return json::object();
}

}  // namespace perfhat::server
