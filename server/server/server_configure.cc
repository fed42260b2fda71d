// Lifecycle and configuration: initialize (capabilities, project and client settings), the
// configuration layers resolved into cfg_, and the feedback source they choose.
#include "server/server/server.h"

#include <algorithm>

#include "server/server/server_internal.h"
#include "server/server/sources.h"

#ifndef PERFHAT_VERSION
#define PERFHAT_VERSION "0.1.0"
#endif

namespace perfhat::server {

json Server::initialize(const json& params) {
  auto p = params.get<lsp::InitializeParams>();
  std::string root;
  if (p.root_uri) {
    if (auto path = lsp::uriToPath(*p.root_uri)) root = *path;
  } else if (p.root_path) {
    root = *p.root_path;
  }
  std::optional<std::string> project_error;
  json project = lsp::json::object();
  if (!root.empty()) project = loadProjectFile(root, &project_error);
  std::vector<std::string> config_warnings;
  {
    MutexLock lock(mu_);
    caps_ = p.capabilities;
    root_ = root;
    layers_.project = withAbsolutePaths(project, root);
    layers_.client = withAbsolutePaths(clientSettings(p.initialization_options), root);
    config_warnings = applyConfigLocked();
    reconfigure(true);
  }
  scheduler_.reconfigureAnalyzer();
  stopRetiredWatcher();
  if (project_error) {
    log_.warn(*project_error);
    showMessageOnce("project-config", lsp::MessageType::Warning, "perfhat: " + *project_error);
  }
  showConfigWarnings(config_warnings);  // outside mu_: showMessageOnce takes it
  initialized_ = true;
  log_.info("initialized; root '" + root + "', positions " +
            (caps_.utf8_positions ? "utf-8" : "utf-16"));

  json commands = json::array();
  for (const char* c : kCommands) commands.push_back(c);
  json caps = {
      {"positionEncoding", caps_.utf8_positions ? "utf-8" : "utf-16"},
      {"textDocumentSync",
       {{"openClose", true}, {"change", 2 /* incremental */}, {"save", {{"includeText", false}}}}},
      {"hoverProvider", true},
      {"inlayHintProvider", {{"resolveProvider", false}}},
      {"codeLensProvider", {{"resolveProvider", false}}},
      {"codeActionProvider", true},
      {"executeCommandProvider", {{"commands", commands}}},
  };
  return {{"capabilities", caps},
          {"serverInfo", {{"name", "perfhat-lsp"}, {"version", PERFHAT_VERSION}}}};
}

std::vector<std::string> Server::applyConfigLocked() {
  std::vector<std::string> warnings;
  cfg_ = layers_.resolve(&warnings);
  scheduler_.setDebounce({cfg_.debounce_ratio, cfg_.debounce_min_ms, cfg_.debounce_max_ms});
  for (const auto& w : warnings) log_.warn(w);
  return warnings;
}

void Server::showConfigWarnings(const std::vector<std::string>& warnings) {
  for (const auto& w : warnings)
    showMessageOnce("config:" + w, lsp::MessageType::Warning, "perfhat: " + w);
}

void Server::reconfigure(bool source_changed) {
  if (provider_ && !source_changed) {
    provider_->setCacheOptions(cfg_.cache);
    updatePolling(false);
    return;
  }
  SourceChoice choice = makeSource(cfg_);
  for (const auto& p : choice.problems) log_.warn(p);
  if (!choice.loaded.empty()) log_.info(choice.loaded);
  file_source_ = choice.file;
  provider_.reset();
  if (watcher_) retired_watcher_ = std::move(watcher_);
  if (choice.source) {
    provider_ = std::make_shared<feedback::FeedbackProvider>(choice.source, cfg_.cache);
    log_.info("feedback source: " + choice.source->describe());
    if (choice.source->canWait() && cfg_.changes_poll_s > 0) {
      feedback::WatchOptions wo;
      wo.poll_interval = std::chrono::seconds(cfg_.changes_poll_s);
      watcher_ = std::make_unique<feedback::ChangeWatcher>(
          provider_, wo, [this](const feedback::ChangesResult& r) { onFeedbackChanged(r); },
          [this](const std::string& problem) { log_.info(problem); });
    }
  }
  updatePolling(true);
}

void Server::stopRetiredWatcher() {
  std::unique_ptr<feedback::ChangeWatcher> retired;
  {
    MutexLock lock(mu_);
    retired = std::move(retired_watcher_);
  }
  retired.reset();  // stops the old source's long-poll, outside mu_ (its callback takes mu_)
}

void Server::didChangeConfiguration(const json& params) {
  json settings = params.contains("settings") ? clientSettings(params["settings"]) : json::object();
  std::vector<std::string> config_warnings;
  {
    MutexLock lock(mu_);
    layers_.client = withAbsolutePaths(settings, root_);
    std::string before = cfg_.handler_url + "\n" + cfg_.feedback_file + "\n" + cfg_.token;
    config_warnings = applyConfigLocked();
    std::string after = cfg_.handler_url + "\n" + cfg_.feedback_file + "\n" + cfg_.token;
    reconfigure(before != after);
  }
  scheduler_.reconfigureAnalyzer();
  stopRetiredWatcher();
  showConfigWarnings(config_warnings);
  scheduler_.markAllDirty(true);
}

}  // namespace perfhat::server
