#include "server/server/server.h"

#include <fmt/format.h>

#include <map>

#include "server/server/server_internal.h"

namespace perfhat::server {

namespace {

std::string describeId(const json& id) { return id.dump(); }

}  // namespace

Server::Server(ConfigLayers layers, std::unique_ptr<Analyzer> analyzer, Send send, Logger& log)
    : send_(std::move(send)),
      log_(log),
      analyzer_(std::move(analyzer)),
      layers_(std::move(layers)),
      scheduler_(schedulerWork()) {
  MutexLock lock(mu_);
  applyConfigLocked();
  reconfigure(true);
  analyzer_->setIndexProgress([this](const IndexEvent& e) { indexProgress(e); });
  scheduler_.start(analysisStackBytes(), "perfhat-worker");  // bench/index reads its CPU time
}

Server::~Server() { stop(); }

void Server::stop() {
  std::vector<std::unique_ptr<feedback::ChangeWatcher>> watchers;
  {
    MutexLock lock(mu_);
    if (stopping_) return;
    stopping_ = true;
    watchers.push_back(std::move(watcher_));
    watchers.push_back(std::move(retired_watcher_));
  }
  cv_.notifyAll();  // fetches and progress waiting on the client end their wait
  std::vector<WaitingRead> orphans = scheduler_.requestStop();
  watchers.clear();  // stops them: a long-poll in flight is aborted
  scheduler_.join();
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

// ---- Dispatch ------------------------------------------------------------------------------
// One typed handler per method: the table is the one place a method is added. A request's
// params are parsed into the handler's parameter type before it runs (a bad shape is
// kInvalidParams); a notification's handler may be null (nothing to do).

template <class P>
Server::RequestHandler Server::typed(void (Server::*handler)(const json& id, const P& params)) {
  return [handler](Server& s, const json& id, const json& params) {
    (s.*handler)(id, params.get<P>());
  };
}

const std::map<std::string, Server::RequestHandler, std::less<>>& Server::requestTable() {
  static const std::map<std::string, RequestHandler, std::less<>> table = {
      {"initialize", typed(&Server::onInitialize)},
      {"shutdown", typed(&Server::onShutdown)},
      {"textDocument/inlayHint", typed(&Server::onInlayHint)},
      {"textDocument/hover", typed(&Server::onHover)},
      {"textDocument/codeLens", typed(&Server::onCodeLens)},
      {"textDocument/codeAction", typed(&Server::onCodeAction)},
      {"workspace/executeCommand", typed(&Server::onExecuteCommand)},
  };
  return table;
}

const std::map<std::string, Server::NotificationHandler, std::less<>>& Server::notificationTable() {
  static const std::map<std::string, NotificationHandler, std::less<>> table = {
      // Configuration came with initialize.
      {"initialized", nullptr},
      {"textDocument/didOpen", &Server::didOpen},
      {"textDocument/didChange", &Server::didChange},
      {"textDocument/didClose", &Server::didClose},
      // Unsaved contents are what we analyse; saving changes nothing.
      {"textDocument/didSave", nullptr},
      {"workspace/didChangeConfiguration", &Server::didChangeConfiguration},
      {"$/cancelRequest", &Server::cancel},
  };
  return table;
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
  const auto& table = requestTable();
  auto handler = table.find(m.method);
  if (handler == table.end()) {
    replyError(m.id, lsp::kMethodNotFound, "method not found: " + m.method);
    return;
  }
  try {
    handler->second(*this, m.id, params);
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
  const auto& table = notificationTable();
  auto handler = table.find(m.method);
  if (handler == table.end()) {
    if (m.method.rfind("$/", 0) != 0) log_.debug("ignoring notification " + m.method);
    return;
  }
  if (!handler->second) return;
  try {
    (this->*handler->second)(params);
  } catch (const std::exception& e) {
    // Notifications have no reply: log and carry on.
    log_.warn("bad " + m.method + " notification: " + e.what());
  }
}
}  // namespace perfhat::server
