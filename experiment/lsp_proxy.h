// `perfhat-experiment lsp-proxy --session DIR -- perfhat-lsp ARGS…`: the treatment group's
// editor starts this instead of perfhat-lsp. It passes every LSP message through unchanged, in
// both directions, and logs to DIR/events.jsonl what the language server showed the participant:
//   lsp_diagnostic  a perfhat.regression diagnostic published (first time per file and message)
//   lsp_hover       a hover answered with content
// `run` turns them into first encounter and root cause of the running task (session.h).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace perfhat::experiment {

// Events a server→client message yields (pure; the proxy's logic without the plumbing).
// `pending_hovers` holds the ids (as JSON text) of hover requests not answered yet.
struct ProxyObserver {
  std::vector<std::string> pending_hovers;
  std::vector<std::string> seen_diagnostics;  // uri + '\n' + message
  void clientMessage(const nlohmann::json& m);
  // {type, text, uri} per event to log.
  std::vector<nlohmann::json> serverMessage(const nlohmann::json& m);
};

int runLspProxy(const std::string& session_dir, const std::vector<std::string>& command);

}  // namespace perfhat::experiment
