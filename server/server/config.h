// perfhat-lsp configuration: every tunable in one struct with safe defaults, built from layers
// with the precedence of DESIGN §12 (command line > environment PERFHAT_* > editor settings
// (initializationOptions / workspace/didChangeConfiguration) > `.perfhat.json` at the workspace
// root > defaults).
//
// Every layer is a JSON object of the same shape, so one parser serves them all:
//   {"feedbackFile": "data.json", "handler": "http://127.0.0.1:4319", "token": "…",
//    "compileCommands": "build/", "profile": "design" | "debug",
//    "features": {…features::Options JSON…},
//    "cache": {"maxEntries": 10000, "ttlSeconds": 600},
//    "http": {"connectTimeoutMs": 1000, "readTimeoutMs": 5000, "totalTimeoutMs": 15000,
//             "maxResponseMb": 64, "fetchWaitMs": 300},
//    "debounce": {"minMs": 50, "maxMs": 500, "ratio": 1.0},
//    "changesPollSeconds": 30,
//    "analysis": {…passed to the analysis unchanged…}}
// Unknown keys are ignored (newer configs still load); wrong types produce a warning naming the
// key and leave the value unchanged.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/features/features.h"
#include "server/feedback/lru_cache.h"

namespace perfhat::server {

struct Config {
  std::string feedback_file;     // --feedback-file
  std::string handler_url;       // --handler
  std::string token;             // --token
  std::string compile_commands;  // --compile-commands (dir or file); "" = search upward
  // libperfhat's collection-budget status JSON and pins file (docs/collection-budget.md):
  // "budgetStatus"/"budgetPins", or the library's own PERFHAT_BUDGET_STATUS/PERFHAT_BUDGET_PINS.
  std::string budget_status;
  std::string budget_pins;
  // The service whose status the handler is asked for (GET /v1/budget?service=): "budgetService",
  // or the library's OTEL_SERVICE_NAME; empty: the newest status of any service.
  std::string budget_service;
  features::Options features;
  feedback::CacheOptions cache;  // 10,000 entries, 10 min (PerformanceHat's values)
  int connect_timeout_ms = 1000;
  int read_timeout_ms = 5000;
  int total_timeout_ms = 15'000;  // one whole request to the handler (slow / drip-feeding)
  int max_response_mb = 64;       // a handler response, decompressed
  // How long a rebuild waits for the handler before it shows cached values (marked stale); the
  // fetch goes on in the background and the hints refresh when it lands.
  int fetch_wait_ms = 300;
  // Rebuild debounce, clangd style: delay = clamp(last build time × ratio, min, max), so we
  // rebuild once the user stops typing.
  int debounce_min_ms = 50;
  int debounce_max_ms = 500;
  double debounce_ratio = 1.0;
  int changes_poll_s = 30;  // handler change feed; 0 = off
  // Open documents that keep their libclang translation unit (about 100 MB each for a file
  // with heavy headers) so that an edit reparses with the preamble; the least recently built
  // beyond this give theirs up and are parsed afresh at their next build. Bounds the server's
  // memory when an editor opens a whole project.
  int max_parsed_documents = 8;
  nlohmann::json analysis = nlohmann::json::object();
};

// The layers, lowest precedence first; resolve() merges them (JSON merge patch) and parses.
struct ConfigLayers {
  nlohmann::json project = nlohmann::json::object();  // .perfhat.json
  nlohmann::json client =
      nlohmann::json::object();                   // initializationOptions / didChangeConfiguration
  nlohmann::json env = nlohmann::json::object();  // PERFHAT_*
  nlohmann::json cli = nlohmann::json::object();  // command line

  // Merged config; problems (wrong types, bad values) are appended to `warnings`.
  Config resolve(std::vector<std::string>* warnings = nullptr) const;
};

// Applies one JSON layer over `cfg`.
void applyJson(Config& cfg, const nlohmann::json& j, std::vector<std::string>& warnings);

// The environment layer from PERFHAT_FEEDBACK_FILE, PERFHAT_HANDLER, PERFHAT_TOKEN,
// PERFHAT_PROFILE, PERFHAT_COMPILE_COMMANDS, PERFHAT_CACHE_MAX_ENTRIES, PERFHAT_CACHE_TTL_S,
// PERFHAT_MAX_PARSED_DOCUMENTS.
nlohmann::json envLayer(const std::function<const char*(const char*)>& getenv_fn);

// `layer` with its relative paths (compileCommands, feedbackFile, analysis.compile_commands)
// made absolute against `base`, once, when the layer is read: libclang sets the process's
// working directory to a compile entry's "directory" while it parses, so a relative path read
// later would name another file. The command line and the environment are relative to the
// working directory the server started in; .perfhat.json and editor settings to the workspace
// root. An empty `base` leaves the layer as it is.
nlohmann::json withAbsolutePaths(nlohmann::json layer, const std::string& base);

// Reads `<root>/.perfhat.json`. Missing file: empty object. Corrupt: empty object and an error.
nlohmann::json loadProjectFile(const std::string& root, std::optional<std::string>* error);

// Editors nest settings under "perfhat" (VS Code's didChangeConfiguration sends
// {"settings": {"perfhat": {...}}}); accepts both the nested and the flat form.
nlohmann::json clientSettings(const nlohmann::json& settings);

}  // namespace perfhat::server
