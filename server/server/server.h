// The language server: the LSP method table, configuration, feedback fetches, and what a build
// of a document does; the scheduling of that work is the Scheduler's (scheduler.h).
//
// Threads: the reader thread (main) calls handle() for every framed message and never waits
// for analysis; the scheduler's one worker thread owns the Analyzer (libclang TUs are
// single-threaded), runs debounced rebuilds, feedback fetches and change polling, and answers
// requests that arrived before their document's snapshot was ready. Outgoing messages go
// through `send`, which the transport serialises.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/thread_annotations.h"
#include "server/feedback/change_watcher.h"
#include "server/feedback/file_source.h"
#include "server/feedback/provider.h"
#include "server/lsp/jsonrpc.h"
#include "server/lsp/protocol.h"
#include "server/lsp/transport.h"
#include "server/server/analyzer.h"
#include "server/server/budget_status_source.h"
#include "server/server/config.h"
#include "server/server/document.h"
#include "server/server/dynamic_view.h"
#include "server/server/log.h"
#include "server/server/scheduler.h"

namespace perfhat::server {

using nlohmann::json;

class Server {
 public:
  using Send = std::function<void(const json&)>;

  Server(ConfigLayers layers, std::unique_ptr<Analyzer> analyzer, Send send, Logger& log);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // One frame from the transport (a body or a framing error).
  void handle(const lsp::Frame& frame);
  void handleBody(std::string_view body);

  // True after the `exit` notification; the process should end with exitCode().
  bool exited() const { return exited_; }
  int exitCode() const { return shutdown_requested_ ? 0 : 1; }
  // Stops the worker (idempotent). Pending requests are answered with an error.
  void stop();

  // For tests and benchmarks: blocks (bounded) until no rebuild is due or running.
  bool waitIdle(std::chrono::milliseconds timeout);
  Config config() const;

 private:
  // Computes a result from a snapshot and the document text it was built from.
  using Compute = std::function<json(const analysis::Snapshot&, const Document&)>;

  // Dispatch: method → typed handler (server.cc). A request handler gets the params parsed into
  // its own parameter type (typed()); notifications whose handler is null need nothing done.
  void onRequest(const lsp::Message& m);
  void onNotification(const lsp::Message& m);
  void onResponse(const lsp::Message& m);
  using RequestHandler = std::function<void(Server&, const json& id, const json& params)>;
  using NotificationHandler = void (Server::*)(const json& params);
  static const std::map<std::string, RequestHandler, std::less<>>& requestTable();
  static const std::map<std::string, NotificationHandler, std::less<>>& notificationTable();
  template <class P>
  static RequestHandler typed(void (Server::*handler)(const json& id, const P& params));

  // Request handlers (server_requests.cc).
  void onInitialize(const json& id, const json& params);
  void onShutdown(const json& id, const json& params);
  void onInlayHint(const json& id, const lsp::InlayHintParams& p);
  void onHover(const json& id, const lsp::TextDocumentPositionParams& p);
  void onCodeLens(const json& id, const lsp::DocumentParams& p);
  void onCodeAction(const json& id, const lsp::CodeActionParams& p);
  void onExecuteCommand(const json& id, const json& params);
  json initialize(const json& params);
  void didOpen(const json& params);
  void didChange(const json& params);
  void didClose(const json& params);
  void didChangeConfiguration(const json& params);
  void cancel(const json& params);
  json executeCommand(const json& id, const json& params, bool& deferred);
  json collectionBudget(const json& args);  // perfhat.collectionBudget (server_budget.cc)
  BudgetSources budgetSources() const;      // the settings and the feedback source (same)
  // Call graph (server_dynamic.cc): the dynamic metrics of a built snapshot (worker), the view
  // of an open document (any thread, not under mu_), and perfhat.showCallGraph.
  DynamicRead readDynamic(const analysis::Snapshot& s);
  std::shared_ptr<const features::DynamicView> dynamicOf(const std::string& uri);
  void showCallGraph(const json& id, const json& args);
  // Answers now if the document's snapshot is current, else when the worker has built it.
  void withSnapshot(const json& id, const std::string& uri, Compute compute);

  // The scheduler's work (server_worker.cc), on its worker thread.
  Scheduler::Work schedulerWork();
  Build rebuild(const Document& doc);
  void afterBuild(const std::string& uri, const Build& build, const Document& doc,
                  const analysis::SnapshotPtr& before);
  // Polling of feedback changes: on while a provider has no watcher of its own (reader thread,
  // under mu_, after reconfigure()).
  void updatePolling(bool restart_timer) REQUIRES(mu_);
  // Feedback for a build: the cache at once when it has everything; otherwise one background
  // fetch, waited for at most fetch_wait_ms, after which the build shows the cache (stale) and
  // the open documents are rebuilt when the fetch lands. Never more than one fetch in flight.
  std::shared_ptr<const analysis::FeedbackView> fetch(const std::vector<std::string>& keys);
  struct FetchJob {
    std::vector<std::string> keys;
    std::shared_ptr<feedback::FeedbackProvider> provider;
    bool done = false;               // GUARDED_BY(mu_)
    bool refresh_when_done = false;  // GUARDED_BY(mu_): a build stopped waiting for it
    feedback::Lookup result;         // written once, before done
  };
  void runFetch(const std::shared_ptr<FetchJob>& job, bool progress);
  // A `$/progress` token the client has created (window/workDoneProgress/create), or "" when it
  // refused or did not answer within half a second: a slow client never stalls the work long.
  std::string createProgressToken(const std::string& prefix);
  void pollChanges();
  // Changed feedback (from the watcher thread or pollChanges): rebuilds the open documents that
  // used a changed key; refresh requests and diagnostics follow the rebuilds.
  void onFeedbackChanged(const feedback::ChangesResult& r);
  void sendRefresh();
  void publishDiagnostics(const std::string& uri, const analysis::Snapshot& s, const Document& d);

  // Workspace index (server_index.cc): `$/progress` of the background indexer (called on its
  // thread), re-analysis of the open documents calling a function an edit changed, and the
  // "show callers with predicted impact" command (answered once the document's snapshot is).
  void indexProgress(const IndexEvent& e);
  void refreshDependents(const std::string& uri, const analysis::SnapshotPtr& before,
                         const analysis::Snapshot& after);
  json showCallers(const json& id, const json& args);

  // Feedback source from the current config (reader thread, under mu_).
  void reconfigure(bool source_changed) REQUIRES(mu_);
  void stopRetiredWatcher();  // not under mu_
  // Resolves the layers into cfg_ and returns the warnings (bad values, each kept at the lower
  // layer's value), which the caller shows once mu_ is released.
  std::vector<std::string> applyConfigLocked() REQUIRES(mu_);
  void showConfigWarnings(const std::vector<std::string>& warnings);

  // Outgoing.
  void reply(const json& id, json result);
  void replyError(const json& id, int code, const std::string& message);
  // The feedback provider of a request that needs one; without one, answers the request with an
  // error and returns nullptr (server_requests.cc).
  std::shared_ptr<feedback::FeedbackProvider> providerOrReplyError(const json& id);
  void notify(std::string_view method, json params);
  void request(std::string_view method, json params, std::function<void(const lsp::Message&)> cb);
  void showMessageOnce(const std::string& key, lsp::MessageType type, const std::string& text);

  PositionEncoding encoding() const {
    return caps_.utf8_positions ? PositionEncoding::Utf8 : PositionEncoding::Utf16;
  }

  Send send_;
  Logger& log_;
  std::unique_ptr<Analyzer> analyzer_;

  mutable Mutex mu_;
  CondVar cv_;
  ConfigLayers layers_ GUARDED_BY(mu_);
  Config cfg_ GUARDED_BY(mu_);
  std::string root_ GUARDED_BY(mu_);
  // Set by initialize (under mu_) before initialized_; read-only afterwards, without the lock.
  lsp::ClientCapabilities caps_;
  std::shared_ptr<feedback::FeedbackProvider> provider_ GUARDED_BY(mu_);
  std::shared_ptr<feedback::FileSource> file_source_ GUARDED_BY(mu_);
  // Long-polls a handler source; null for file sources (the worker polls those). A replaced
  // watcher is parked in retired_watcher_ and stopped outside mu_ (its callback takes mu_).
  std::unique_ptr<feedback::ChangeWatcher> watcher_ GUARDED_BY(mu_);
  std::unique_ptr<feedback::ChangeWatcher> retired_watcher_ GUARDED_BY(mu_);
  std::map<std::string, bool> shown_ GUARDED_BY(mu_);  // showMessageOnce keys
  std::map<std::string, std::function<void(const lsp::Message&)>> outgoing_ GUARDED_BY(mu_);
  int next_outgoing_ GUARDED_BY(mu_) = 0;
  bool stopping_ GUARDED_BY(mu_) = false;
  std::shared_ptr<FetchJob> fetch_job_ GUARDED_BY(mu_);  // the latest background fetch
  std::thread fetch_thread_;  // started and joined by the worker, then by stop()

  // The indexer's $/progress token while a pass runs, and when it last reported.
  std::string index_token_ GUARDED_BY(mu_);
  std::chrono::steady_clock::time_point index_last_report_ GUARDED_BY(mu_);

  std::atomic<bool> initialized_{false};
  std::atomic<bool> shutdown_requested_{false};
  std::atomic<bool> exited_{false};
  // Documents, debounce, the worker (a large stack: parsing and analysis of deep code recurse).
  // Its lock is a leaf: the server calls in holding mu_.
  Scheduler scheduler_;
};

}  // namespace perfhat::server
