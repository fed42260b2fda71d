#include "server/server/server.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "common/function_key.h"
#include "server/analysis/annotation.h"
#include "server/features/features.h"
#include "server/lsp/render.h"
#include "server/server/sources.h"

#ifndef PERFHAT_VERSION
#define PERFHAT_VERSION "0.1.0"
#endif

namespace perfhat::server {
namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kCommands[] = {"perfhat.refresh", "perfhat.setIterations", "perfhat.showData",
                                     "perfhat.showCallers"};

double msSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

std::string describeId(const json& id) { return id.dump(); }

// An empty snapshot carrying one problem, when the analysis itself failed.
analysis::SnapshotPtr failedSnapshot(const AnalysisInput& in, const std::string& message) {
  auto s = std::make_shared<analysis::Snapshot>();
  s->path = in.path;
  s->version = in.version;
  s->problems.push_back({{{0, 0}, {0, 0}}, "perfhat: analysis failed: " + message, true});
  return s;
}

}  // namespace

Server::Server(ConfigLayers layers, std::unique_ptr<Analyzer> analyzer, Send send, Logger& log)
    : send_(std::move(send)),
      log_(log),
      analyzer_(std::move(analyzer)),
      layers_(std::move(layers)) {
  MutexLock lock(mu_);
  applyConfigLocked();
  reconfigure(true);
  analyzer_->setIndexProgress([this](const IndexEvent& e) { indexProgress(e); });
  worker_ = LargeStackThread(analysisStackBytes(), [this] { workerLoop(); });
}

Server::~Server() { stop(); }

void Server::stop() {
  std::vector<Pending> orphans;
  std::vector<std::unique_ptr<feedback::ChangeWatcher>> watchers;
  {
    MutexLock lock(mu_);
    if (stopping_) return;
    stopping_ = true;
    orphans.swap(pending_);
    watchers.push_back(std::move(watcher_));
    watchers.push_back(std::move(retired_watcher_));
  }
  cv_.notifyAll();
  watchers.clear();  // stops them: a long-poll in flight is aborted
  if (worker_.joinable()) worker_.join();
  // A fetch still waiting on a slow handler: abort it (repeatedly, in case the request had not
  // reached the socket yet when first cancelled).
  if (fetch_thread_.joinable()) {
    MutexLock lock(mu_);
    std::shared_ptr<FetchJob> job = fetch_job_;
    while (job && !job->done) {
      lock.unlock();
      job->provider->cancelFetch();
      lock.lock();
      if (!job->done) cv_.waitFor(lock, std::chrono::milliseconds(50));
    }
    lock.unlock();
    fetch_thread_.join();
  }
  for (const auto& p : orphans) replyError(p.id, lsp::kServerCancelled, "server is shutting down");
}

Config Server::config() const {
  MutexLock lock(mu_);
  return cfg_;
}

// ---- Outgoing ----------------------------------------------------------------------------

void Server::reply(const json& id, json result) { send_(lsp::makeResult(id, std::move(result))); }

void Server::replyError(const json& id, int code, const std::string& message) {
  send_(lsp::makeError(id, code, message));
}

void Server::notify(std::string_view method, json params) {
  send_(lsp::makeNotification(method, std::move(params)));
}

void Server::request(std::string_view method, json params,
                     std::function<void(const lsp::Message&)> cb) {
  std::string id;
  {
    MutexLock lock(mu_);
    id = "perfhat-" + std::to_string(++next_outgoing_);
    if (cb) outgoing_[id] = std::move(cb);
  }
  send_(lsp::makeRequest(id, method, std::move(params)));
}

void Server::showMessageOnce(const std::string& key, lsp::MessageType type,
                             const std::string& text) {
  {
    MutexLock lock(mu_);
    if (shown_[key]) return;
    shown_[key] = true;
  }
  notify("window/showMessage", lsp::ShowMessageParams{type, text});
}

// ---- Incoming ----------------------------------------------------------------------------

void Server::handle(const lsp::Frame& frame) {
  if (!frame.ok) {
    // Nothing to reply to (no id is known); the parser has already resynchronised.
    log_.warn("framing error: " + frame.error);
    return;
  }
  handleBody(frame.body);
}

void Server::handleBody(std::string_view body) {
  lsp::Incoming in = lsp::parseMessage(body);
  if (!in.message) {
    log_.warn("rejected message: " + in.problem);
    if (in.error_reply) send_(*in.error_reply);
    return;
  }
  const lsp::Message& m = *in.message;
  switch (m.kind) {
    case lsp::Message::Kind::Request:
      onRequest(m);
      break;
    case lsp::Message::Kind::Notification:
      onNotification(m);
      break;
    case lsp::Message::Kind::Response:
      onResponse(m);
      break;
  }
}

void Server::onResponse(const lsp::Message& m) {
  std::function<void(const lsp::Message&)> cb;
  {
    MutexLock lock(mu_);
    std::string key = m.id.is_string() ? m.id.get<std::string>() : m.id.dump();
    auto it = outgoing_.find(key);
    if (it == outgoing_.end()) return;
    cb = std::move(it->second);
    outgoing_.erase(it);
  }
  if (m.error)
    log_.info(fmt::format("client answered with error {}: {}", m.error->code, m.error->message));
  cb(m);
}

void Server::onRequest(const lsp::Message& m) {
  auto t0 = Clock::now();
  const json& params = m.params.is_null() ? json::object() : m.params;
  if (m.method != "initialize" && !initialized_) {
    replyError(m.id, lsp::kServerNotInitialized, "server not initialized: " + m.method);
    return;
  }
  if (shutdown_requested_ && m.method != "shutdown") {
    replyError(m.id, lsp::kInvalidRequest, "server is shutting down");
    return;
  }
  try {
    if (m.method == "initialize") {
      if (initialized_) throw lsp::RpcError(lsp::kInvalidRequest, "initialize sent twice");
      reply(m.id, initialize(params));
    } else if (m.method == "shutdown") {
      shutdown_requested_ = true;
      reply(m.id, nullptr);
    } else if (m.method == "textDocument/inlayHint") {
      auto p = params.get<lsp::InlayHintParams>();
      PositionEncoding enc = encoding();
      features::Options o = config().features;
      withSnapshot(m.id, p.text_document.uri,
                   [p, enc, o](const analysis::Snapshot& s, const Document& d) {
                     analysis::Range r{d.toByte(p.range.start, enc), d.toByte(p.range.end, enc)};
                     json out = json::array();
                     auto conv = [&](const analysis::Position& bp) { return d.toLsp(bp, enc); };
                     for (const auto& h : features::inlayHints(s, r, o)) {
                       out.push_back(lsp::render(h, conv));
                     }
                     return out;
                   });
    } else if (m.method == "textDocument/hover") {
      auto p = params.get<lsp::TextDocumentPositionParams>();
      PositionEncoding enc = encoding();
      features::Options o = config().features;
      bool markdown = caps_.hover_markdown;
      withSnapshot(m.id, p.text_document.uri,
                   [p, enc, o, markdown](const analysis::Snapshot& s, const Document& d) -> json {
                     auto h = features::hover(s, d.toByte(p.position, enc), o);
                     if (!h) return nullptr;
                     auto conv = [&](const analysis::Position& bp) { return d.toLsp(bp, enc); };
                     return lsp::render(*h, conv, markdown);
                   });
    } else if (m.method == "textDocument/codeLens") {
      auto p = params.get<lsp::DocumentParams>();
      PositionEncoding enc = encoding();
      features::Options o = config().features;
      withSnapshot(m.id, p.text_document.uri,
                   [enc, o](const analysis::Snapshot& s, const Document& d) {
                     json out = json::array();
                     auto conv = [&](const analysis::Position& bp) { return d.toLsp(bp, enc); };
                     for (const auto& l : features::codeLenses(s, o)) {
                       out.push_back(lsp::render(l, conv));
                     }
                     return out;
                   });
    } else if (m.method == "textDocument/codeAction") {
      auto p = params.get<lsp::CodeActionParams>();
      PositionEncoding enc = encoding();
      features::Options o = config().features;
      withSnapshot(m.id, p.text_document.uri,
                   [p, enc, o](const analysis::Snapshot& s, const Document& d) {
                     analysis::Range r{d.toByte(p.range.start, enc), d.toByte(p.range.end, enc)};
                     json out = json::array();
                     auto conv = [&](const analysis::Position& bp) { return d.toLsp(bp, enc); };
                     for (const auto& a : features::codeActions(s, r, o, d.text())) {
                       out.push_back(lsp::render(a, d.uri(), conv));
                     }
                     return out;
                   });
    } else if (m.method == "workspace/executeCommand") {
      bool deferred = false;
      json result = executeCommand(m.id, params, deferred);
      if (!deferred) reply(m.id, std::move(result));
    } else {
      replyError(m.id, lsp::kMethodNotFound, "method not found: " + m.method);
      return;
    }
  } catch (const lsp::RpcError& e) {
    replyError(m.id, e.code(), e.what());
  } catch (const json::exception& e) {
    replyError(m.id, lsp::kInvalidParams, "invalid params for " + m.method + ": " + e.what());
  } catch (const std::exception& e) {
    log_.error("internal error in " + m.method + ": " + e.what());
    replyError(m.id, lsp::kInternalError, std::string("internal error: ") + e.what());
  }
  log_.debug(
      fmt::format("request {} {} dispatched in {:f} ms", m.method, describeId(m.id), msSince(t0)));
}

void Server::onNotification(const lsp::Message& m) {
  const json& params = m.params.is_null() ? json::object() : m.params;
  if (m.method == "exit") {
    exited_ = true;
    return;
  }
  if (!initialized_) return;  // the spec drops notifications before initialize
  try {
    // A dispatch table: "initialized" and "didSave" both need nothing, for different reasons.
    // NOLINTNEXTLINE(bugprone-branch-clone)
    if (m.method == "initialized") {
      // nothing to do: configuration came with initialize
    } else if (m.method == "textDocument/didOpen") {
      didOpen(params);
    } else if (m.method == "textDocument/didChange") {
      didChange(params);
    } else if (m.method == "textDocument/didClose") {
      didClose(params);
    } else if (m.method == "textDocument/didSave") {
      // Unsaved contents are what we analyse; saving changes nothing.
    } else if (m.method == "workspace/didChangeConfiguration") {
      didChangeConfiguration(params);
    } else if (m.method == "$/cancelRequest") {
      cancel(params);
    } else if (m.method.rfind("$/", 0) != 0) {
      log_.debug("ignoring notification " + m.method);
    }
  } catch (const std::exception& e) {
    // Notifications have no reply: log and carry on.
    log_.warn("bad " + m.method + " notification: " + e.what());
  }
}

// ---- Lifecycle and configuration -----------------------------------------------------------

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
    layers_.project = project;
    layers_.client = clientSettings(p.initialization_options);
    config_warnings = applyConfigLocked();
    reconfigure(true);
    analyzer_config_dirty_ = true;
  }
  stopRetiredWatcher();
  cv_.notifyAll();
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
  next_poll_ = Clock::now() + std::chrono::seconds(std::max(cfg_.changes_poll_s, 1));
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
    layers_.client = settings;
    std::string before = cfg_.handler_url + "\n" + cfg_.feedback_file + "\n" + cfg_.token;
    config_warnings = applyConfigLocked();
    std::string after = cfg_.handler_url + "\n" + cfg_.feedback_file + "\n" + cfg_.token;
    reconfigure(before != after);
    analyzer_config_dirty_ = true;
  }
  stopRetiredWatcher();
  showConfigWarnings(config_warnings);
  markAllDirty(true);
}

// ---- Documents ------------------------------------------------------------------------------

void Server::didOpen(const json& params) {
  auto p = params.get<lsp::DidOpenTextDocumentParams>();
  auto path = lsp::uriToPath(p.text_document.uri);
  if (!path) {
    log_.warn("didOpen: not a file URI, not analysed: " + p.text_document.uri);
    return;
  }
  auto doc = std::make_shared<const Document>(p.text_document.uri, *path, p.text_document.version,
                                              p.text_document.text);
  {
    MutexLock lock(mu_);
    DocState& st = docs_[p.text_document.uri];
    st = DocState{};
    st.doc = doc;
    st.dirty = true;
    st.due = Clock::now();  // first build: no debounce
  }
  cv_.notifyAll();
}

void Server::didChange(const json& params) {
  auto p = params.get<lsp::DidChangeTextDocumentParams>();
  {
    MutexLock lock(mu_);
    auto it = docs_.find(p.text_document.uri);
    if (it == docs_.end()) {
      log_.warn("didChange for a document that is not open: " + p.text_document.uri);
      return;
    }
    auto updated = std::make_shared<Document>(*it->second.doc);
    if (auto err = updated->applyChanges(p.text_document.version, p.content_changes, encoding())) {
      log_.warn("didChange " + p.text_document.uri + ": " + *err + "; change ignored");
      return;
    }
    it->second.doc = std::move(updated);
    double delay =
        std::clamp(last_build_ms_ * cfg_.debounce_ratio, static_cast<double>(cfg_.debounce_min_ms),
                   static_cast<double>(cfg_.debounce_max_ms));
    it->second.dirty = true;
    it->second.due = Clock::now() + std::chrono::microseconds(static_cast<int64_t>(delay * 1000));
  }
  cv_.notifyAll();
}

void Server::didClose(const json& params) {
  auto p = params.get<lsp::DidCloseTextDocumentParams>();
  std::vector<Pending> orphans;
  {
    MutexLock lock(mu_);
    auto it = docs_.find(p.text_document.uri);
    if (it == docs_.end()) return;
    closed_paths_.push_back(it->second.doc->path());
    docs_.erase(it);
    auto keep = std::stable_partition(pending_.begin(), pending_.end(), [&](const Pending& q) {
      return q.uri != p.text_document.uri;
    });
    orphans.assign(std::make_move_iterator(keep), std::make_move_iterator(pending_.end()));
    pending_.erase(keep, pending_.end());
  }
  cv_.notifyAll();
  for (const auto& q : orphans) {
    replyError(q.id, lsp::kContentModified, "document closed: " + p.text_document.uri);
  }
  notify("textDocument/publishDiagnostics",
         lsp::PublishDiagnosticsParams{p.text_document.uri, std::nullopt, {}});
}

void Server::cancel(const json& params) {
  auto p = params.get<lsp::CancelParams>();
  std::optional<Pending> cancelled;
  {
    MutexLock lock(mu_);
    auto it = std::find_if(pending_.begin(), pending_.end(),
                           [&](const Pending& q) { return q.id == p.id; });
    if (it == pending_.end()) return;  // already answered (or never seen): nothing to do
    cancelled = std::move(*it);
    pending_.erase(it);
  }
  replyError(cancelled->id, lsp::kRequestCancelled, "request cancelled");
}

void Server::withSnapshot(const json& id, const std::string& uri, Compute compute) {
  analysis::SnapshotPtr snap;
  std::shared_ptr<const Document> doc;
  {
    MutexLock lock(mu_);
    auto it = docs_.find(uri);
    if (it == docs_.end()) {
      throw lsp::RpcError(lsp::kInvalidParams, "document not open: " + uri);
    }
    const DocState& st = it->second;
    if (st.snapshot && st.built_doc && st.built_doc->version() == st.doc->version() && !st.dirty) {
      snap = st.snapshot;
      doc = st.built_doc;
    } else {
      pending_.push_back(Pending{id, uri, std::move(compute)});
      return;
    }
  }
  reply(id, compute(*snap, *doc));
}

// ---- Commands ------------------------------------------------------------------------------

json Server::executeCommand(const json& id, const json& params, bool& deferred) {
  auto p = params.get<lsp::ExecuteCommandParams>();
  const json& args = p.arguments;
  if (p.command == "perfhat.refresh") {
    post([this] {
      std::shared_ptr<feedback::FileSource> file;
      std::shared_ptr<feedback::FeedbackProvider> provider;
      {
        MutexLock lock(mu_);
        file = file_source_;
        provider = provider_;
        shown_.clear();  // report an unreachable handler again if it still is
      }
      if (file) {
        if (auto err = file->load()) log_.warn(*err);
      }
      if (provider) provider->expireAll();
      markAllDirty(true);
    });
    return nullptr;
  }
  if (p.command == "perfhat.showData") {
    if (args.empty() || !args[0].is_string()) {
      throw lsp::RpcError(lsp::kInvalidParams, "perfhat.showData needs a function key argument");
    }
    std::string key = args[0].get<std::string>();
    deferred = true;  // the lookup may go to the handler: answer from the worker
    post([this, id, key, args] {
      std::shared_ptr<feedback::FeedbackProvider> provider;
      {
        MutexLock lock(mu_);
        provider = provider_;
      }
      if (!provider) {
        replyError(id, lsp::kRequestFailed, "no feedback source configured");
        return;
      }
      // While a fetch waits on a slow handler, answer from the cache rather than queue a second
      // request behind it on the worker.
      feedback::Lookup l = provider->cached({key});
      bool in_flight = false;
      {
        MutexLock lock(mu_);
        in_flight = fetch_job_ && !fetch_job_->done;
      }
      if (l.requested_keys > 0 && !in_flight) l = provider->get({key});
      const FeedbackItem* item = nullptr;
      for (const auto& it : l.items) {
        if (it.key == key || it.mangled == key) item = &it;
      }
      if (!item && !l.items.empty()) item = &l.items.front();
      if (!item) {
        replyError(id, lsp::kRequestFailed,
                   "no production data for " + key + (l.error.empty() ? "" : " (" + l.error + ")"));
        return;
      }
      json j = *item;
      if (args.size() >= 3 && args[1] == "loop" && args[2].is_string()) {
        int ordinal = std::atoi(args[2].get<std::string>().c_str());
        for (const auto& loop : item->loops) {
          if (loop.ordinal == ordinal) j = {{"key", item->key}, {"loop", loop}};
        }
      }
      j["stale"] = l.stale;
      reply(id, j);
    });
    return nullptr;
  }
  if (p.command == "perfhat.showCallers") {
    deferred = true;  // answered with the document's snapshot
    return showCallers(id, args);
  }
  if (p.command == "perfhat.setIterations") {
    // Arguments: [uri, loop header line (0-based), iterations].
    if (args.size() < 3 || !args[0].is_string() || !args[1].is_number_integer() ||
        !args[2].is_number() || !(args[2].get<double>() > 0 && args[2].get<double>() < 1e12)) {
      throw lsp::RpcError(lsp::kInvalidParams,
                          "perfhat.setIterations needs [uri, line, 0 < iterations < 1e12]");
    }
    std::string uri = args[0].get<std::string>();
    int line = args[1].get<int>();
    long n = std::lround(args[2].get<double>());
    std::shared_ptr<const Document> doc;
    {
      MutexLock lock(mu_);
      auto it = docs_.find(uri);
      if (it == docs_.end()) throw lsp::RpcError(lsp::kInvalidParams, "document not open: " + uri);
      doc = it->second.doc;
    }
    if (line < 0 || static_cast<size_t>(line) >= doc->lines().lineCount()) {
      throw lsp::RpcError(lsp::kInvalidParams, "line out of range");
    }
    std::string_view header = doc->lines().line(doc->text(), line);
    std::string indent(header.substr(0, header.find_first_not_of(" \t")));
    std::string comment = indent + analysis::iterationsAnnotationText(n);
    lsp::TextEdit edit{{{line, 0}, {line, 0}}, comment + "\n"};
    if (line > 0) {
      std::string above(doc->lines().line(doc->text(), line - 1));
      const auto annotation = analysis::parseIterationsAnnotation(above);
      if (annotation && annotation->alone) {  // the analysis reads it for this loop: replace it
        lsp::Position end = doc->toLsp({line - 1, static_cast<int>(above.size())}, encoding());
        edit = {{{line - 1, 0}, end}, comment};
      }
    }
    json workspace_edit = {{"changes", {{uri, json::array({edit})}}}};
    request("workspace/applyEdit",
            {{"label", "perfhat: set expected iterations"}, {"edit", workspace_edit}}, nullptr);
    return nullptr;
  }
  throw lsp::RpcError(lsp::kInvalidParams, "unknown command: " + p.command);
}

// ---- Worker -----------------------------------------------------------------------------------

void Server::post(std::function<void()> task) {
  {
    MutexLock lock(mu_);
    tasks_.push_back(std::move(task));
  }
  cv_.notifyAll();
}

void Server::markAllDirty(bool refresh_after) {
  {
    MutexLock lock(mu_);
    for (auto& [uri, st] : docs_) {
      st.dirty = true;
      st.due = Clock::now();
    }
    if (refresh_after) refresh_after_build_ = true;
  }
  cv_.notifyAll();
}

void Server::sendRefresh() {
  lsp::ClientCapabilities caps;
  {
    MutexLock lock(mu_);
    caps = caps_;
  }
  if (caps.inlay_hint_refresh) request("workspace/inlayHint/refresh", nullptr, nullptr);
  if (caps.code_lens_refresh) request("workspace/codeLens/refresh", nullptr, nullptr);
}

bool Server::waitIdle(std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  MutexLock lock(mu_);
  for (;;) {
    bool idle =
        !busy_ && tasks_.empty() &&
        std::none_of(docs_.begin(), docs_.end(), [](const auto& d) { return d.second.dirty; });
    if (idle) return true;
    if (cv_.waitUntil(lock, deadline) == std::cv_status::timeout) return false;
  }
}

void Server::workerLoop() {
  MutexLock lock(mu_);
  while (!stopping_) {
    if (analyzer_config_dirty_) {
      analyzer_config_dirty_ = false;
      Config cfg = cfg_;
      std::string root = root_;
      busy_ = true;
      lock.unlock();
      analyzer_->configure(cfg, root);
      lock.lock();
      busy_ = false;
      continue;
    }
    if (!closed_paths_.empty()) {
      std::vector<std::string> closed;
      closed.swap(closed_paths_);
      busy_ = true;
      lock.unlock();
      for (const auto& p : closed) analyzer_->close(p);
      lock.lock();
      busy_ = false;
      continue;
    }
    if (!tasks_.empty()) {
      auto task = std::move(tasks_.front());
      tasks_.pop_front();
      busy_ = true;
      lock.unlock();
      task();
      lock.lock();
      busy_ = false;
      cv_.notifyAll();
      continue;
    }
    // The dirty document due first.
    std::string uri;
    Clock::time_point due = Clock::time_point::max();
    for (const auto& [u, st] : docs_) {
      if (st.dirty && st.due < due) {
        due = st.due;
        uri = u;
      }
    }
    auto now = Clock::now();
    if (!uri.empty() && due <= now) {
      DocState& st = docs_[uri];
      st.dirty = false;
      auto doc = st.doc;
      busy_ = true;
      lock.unlock();
      rebuild(uri, doc);
      lock.lock();
      busy_ = false;
      bool any_dirty =
          std::any_of(docs_.begin(), docs_.end(), [](const auto& d) { return d.second.dirty; });
      if (!any_dirty && refresh_after_build_) {
        refresh_after_build_ = false;
        lock.unlock();
        sendRefresh();
        lock.lock();
      }
      cv_.notifyAll();
      continue;
    }
    bool polling = provider_ && !watcher_ && cfg_.changes_poll_s > 0 && !docs_.empty();
    if (polling && next_poll_ <= now) {
      next_poll_ = now + std::chrono::seconds(cfg_.changes_poll_s);
      busy_ = true;
      lock.unlock();
      pollChanges();
      lock.lock();
      busy_ = false;
      continue;
    }
    Clock::time_point wake = due;
    if (polling) wake = std::min(wake, next_poll_);
    cv_.notifyAll();  // waitIdle() observers
    if (wake == Clock::time_point::max()) {
      cv_.wait(lock);
    } else {
      cv_.waitUntil(lock, wake);
    }
  }
}

void Server::pollChanges() {
  std::shared_ptr<feedback::FeedbackProvider> provider;
  {
    MutexLock lock(mu_);
    provider = provider_;
  }
  if (!provider) return;
  feedback::ChangesResult r = provider->poll();
  if (r.status != feedback::FetchStatus::Ok) {
    log_.debug(std::string("change poll failed: ") + r.error);
    return;
  }
  if (r.all || !r.keys.empty()) onFeedbackChanged(r);
}

void Server::onFeedbackChanged(const feedback::ChangesResult& r) {
  // A document used a change if it asked for a changed key, for a cache entry the change
  // dropped, or for a function of the same qualified name (keys recorded without parameters).
  std::set<std::string> touched(r.keys.begin(), r.keys.end());
  touched.insert(r.invalidated.begin(), r.invalidated.end());
  std::set<std::string> touched_names;
  for (const auto& k : r.keys) touched_names.insert(qualifiedName(k));
  size_t rebuilt = 0;
  {
    MutexLock lock(mu_);
    for (auto& [uri, st] : docs_) {
      auto hit = [&](const std::string& k) {
        return touched.count(k) > 0 || touched_names.count(qualifiedName(k)) > 0;
      };
      bool used = r.all || !st.snapshot ||
                  std::any_of(st.feedback_keys.begin(), st.feedback_keys.end(), hit);
      if (!used) continue;
      st.dirty = true;
      st.due = Clock::now();
      ++rebuilt;
    }
    if (rebuilt) refresh_after_build_ = true;
  }
  log_.info(fmt::format("feedback changed ({} keys); re-analysing {} open document(s)",
                        r.all ? std::string("all") : std::to_string(r.keys.size()), rebuilt));
  if (rebuilt) cv_.notifyAll();
}

std::shared_ptr<const analysis::FeedbackView> Server::fetch(const std::vector<std::string>& keys) {
  std::shared_ptr<feedback::FeedbackProvider> provider;
  bool progress = false;
  int wait_ms = 0;
  {
    MutexLock lock(mu_);
    provider = provider_;
    progress = caps_.work_done_progress;
    wait_ms = cfg_.fetch_wait_ms;
  }
  if (!provider) return std::make_shared<analysis::InMemoryFeedback>();
  feedback::Lookup cached = provider->cached(keys);
  if (cached.requested_keys == 0) {
    return std::make_shared<analysis::InMemoryFeedback>(std::move(cached.items), false);
  }
  auto job = std::make_shared<FetchJob>();
  job->keys = keys;
  job->provider = provider;
  {
    MutexLock lock(mu_);
    if (stopping_)
      return std::make_shared<analysis::InMemoryFeedback>(std::move(cached.items), true);
    if (fetch_job_ && !fetch_job_->done) {
      // The handler has not answered the previous fetch yet: do not queue behind it. This build
      // shows the cache; the documents are rebuilt when that fetch lands.
      fetch_job_->refresh_when_done = true;
      return std::make_shared<analysis::InMemoryFeedback>(std::move(cached.items), true);
    }
    fetch_job_ = job;
  }
  if (fetch_thread_.joinable()) fetch_thread_.join();  // its job is done
  fetch_thread_ = std::thread([this, job, progress] { runFetch(job, progress); });
  {
    MutexLock lock(mu_);
    const auto deadline = Clock::now() + std::chrono::milliseconds(std::max(wait_ms, 0));
    while (!job->done && !stopping_) {
      if (cv_.waitUntil(lock, deadline) == std::cv_status::timeout) break;
    }
    if (!job->done) {
      job->refresh_when_done = true;
      lock.unlock();
      const std::string text = "perfhat: feedback " + provider->source().describe() +
                               " has not answered within " + std::to_string(wait_ms) +
                               " ms. Hints show the cache, marked stale, until it does.";
      log_.info(text);
      // The same key as a failure: one message for one outage, whether it ends slow or failed.
      showMessageOnce("source-failure", lsp::MessageType::Warning, text);
      return std::make_shared<analysis::InMemoryFeedback>(std::move(cached.items), true);
    }
  }
  return std::make_shared<analysis::InMemoryFeedback>(job->result.items, job->result.stale);
}

void Server::runFetch(const std::shared_ptr<FetchJob>& job, bool progress) {
  const std::vector<std::string>& keys = job->keys;
  feedback::FeedbackProvider& provider = *job->provider;
  // $/progress around the bulk fetch. The token must be created by the client first; wait
  // (bounded) for its answer so a slow client never stalls the fetch for long.
  std::string token;
  if (progress) {
    token = "perfhat-fetch-" + std::to_string(Clock::now().time_since_epoch().count());
    auto created = std::make_shared<std::atomic<int>>(0);  // 0 waiting, 1 ok, 2 refused
    request("window/workDoneProgress/create", {{"token", token}},
            [this, created](const lsp::Message& m) {
              created->store(m.error ? 2 : 1);
              cv_.notifyAll();
            });
    MutexLock lock(mu_);
    const auto deadline = Clock::now() + std::chrono::milliseconds(500);
    while (created->load() == 0 && !stopping_) {
      if (cv_.waitUntil(lock, deadline) == std::cv_status::timeout) break;
    }
    if (created->load() != 1) token.clear();
  }
  if (!token.empty()) {
    notify("$/progress",
           {{"token", token},
            {"value", lsp::WorkDoneProgress{lsp::WorkDoneProgress::Kind::Begin,
                                            "perfhat: fetching production data",
                                            std::to_string(keys.size()) + " functions", 0}}});
  }
  feedback::Lookup l = provider.get(keys);
  if (!token.empty()) {
    std::string msg = l.error.empty() ? std::to_string(l.items.size()) + " with data" : l.error;
    notify("$/progress", {{"token", token},
                          {"value", lsp::WorkDoneProgress{lsp::WorkDoneProgress::Kind::End, "", msg,
                                                          std::nullopt}}});
  }
  if (l.fetched) {
    log_.info(fmt::format("fetched feedback for {} keys ({} cached) in {:f} ms: {}",
                          l.requested_keys, l.cache_hits, l.fetch_ms,
                          l.error.empty() ? "ok" : l.error));
  }
  if (l.status == feedback::FetchStatus::Ok && l.fetched) {
    MutexLock lock(mu_);
    shown_.erase("source-failure");  // recovered: tell the user again at the next outage
  } else if (l.status != feedback::FetchStatus::Ok) {
    std::string what = provider.source().describe();
    std::string text = l.status == feedback::FetchStatus::Unreachable
                           ? "perfhat: feedback " + what + " is unreachable (" + l.error +
                                 "). Hints keep working from the cache and are marked stale."
                           : "perfhat: feedback " + what + " failed: " + l.error +
                                 ". Hints keep working from the cache and are marked stale.";
    log_.warn(text);
    showMessageOnce("source-failure", lsp::MessageType::Warning, text);
  }
  bool refresh = false;
  {
    MutexLock lock(mu_);
    refresh = job->refresh_when_done && l.status == feedback::FetchStatus::Ok && !stopping_;
    job->result = std::move(l);
    job->done = true;
  }
  cv_.notifyAll();
  // New data for builds that showed the cache meanwhile: rebuild, then refresh the editor.
  if (refresh) markAllDirty(true);
}

void Server::rebuild(const std::string& uri, const std::shared_ptr<const Document>& doc) {
  AnalysisInput in{doc->path(), doc->text(), doc->version()};
  std::vector<std::string> warnings;
  std::vector<std::string> used_keys;  // every key this build asked feedback for
  auto t0 = Clock::now();
  analysis::SnapshotPtr snap;
  try {
    snap = analyzer_->analyze(
        in,
        [&](const std::vector<std::string>& keys) {
          used_keys.insert(used_keys.end(), keys.begin(), keys.end());
          return fetch(keys);
        },
        warnings);
  } catch (const std::exception& e) {
    log_.error("analysis of " + doc->path() + " failed: " + e.what());
    snap = failedSnapshot(in, e.what());
  }
  if (!snap) snap = failedSnapshot(in, "no result");
  double ms = msSince(t0);
  for (const auto& w : warnings) {
    log_.warn(doc->path() + ": " + w);
    showMessageOnce("warning:" + w, lsp::MessageType::Warning, "perfhat: " + w);
  }
  log_.info(fmt::format("built {} v{} in {:f} ms (parse {:f}, fetch {:f}, analysis {:f})",
                        doc->path(), doc->version(), ms, snap->parse_ms, snap->fetch_ms,
                        snap->analysis_ms));

  std::vector<Pending> ready;
  analysis::SnapshotPtr before;
  {
    MutexLock lock(mu_);
    last_build_ms_ = ms;
    auto it = docs_.find(uri);
    if (it == docs_.end()) return;  // closed meanwhile
    before = it->second.snapshot;
    it->second.snapshot = snap;
    it->second.built_doc = doc;
    std::sort(used_keys.begin(), used_keys.end());
    used_keys.erase(std::unique(used_keys.begin(), used_keys.end()), used_keys.end());
    it->second.feedback_keys = std::move(used_keys);
    // Requests waiting for this document are answered once the snapshot matches the latest
    // text; if another edit arrived during the build they wait for the next one (at most one
    // debounce away), so their positions always refer to the text they were computed on.
    auto keep = std::stable_partition(pending_.begin(), pending_.end(),
                                      [&](const Pending& q) { return q.uri != uri; });
    if (!it->second.dirty) {
      ready.assign(std::make_move_iterator(keep), std::make_move_iterator(pending_.end()));
      pending_.erase(keep, pending_.end());
    }
  }
  for (auto& q : ready) {
    try {
      reply(q.id, q.compute(*snap, *doc));
    } catch (const std::exception& e) {
      replyError(q.id, lsp::kInternalError, std::string("internal error: ") + e.what());
    }
  }
  publishDiagnostics(uri, *snap, *doc);
  refreshDependents(uri, before, *snap);
}

void Server::publishDiagnostics(const std::string& uri, const analysis::Snapshot& s,
                                const Document& d) {
  features::Options o = config().features;
  PositionEncoding enc = encoding();
  auto conv = [&](const analysis::Position& bp) { return d.toLsp(bp, enc); };
  lsp::PublishDiagnosticsParams p{uri, d.version(), {}};
  for (const auto& diag : features::diagnostics(s, o))
    p.diagnostics.push_back(lsp::render(diag, conv));
  notify("textDocument/publishDiagnostics", p);
}

}  // namespace perfhat::server
