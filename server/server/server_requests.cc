// The feature requests (inlay hints, hover, code lens, code actions) and workspace commands:
// each answers from the document's current snapshot, or once the worker has built it.
#include "server/server/server.h"

#include "server/analysis/annotation.h"
#include "server/features/features.h"
#include "server/presentation/render.h"
#include "server/server/server_internal.h"

namespace perfhat::server {
namespace {

// The LSP form of each of a feature's results: the JSON array a range request answers.
template <class Results, class Render>
json renderEach(const Results& results, Render render) {
  json out = json::array();
  for (const auto& r : results) out.push_back(render(r));
  return out;
}

}  // namespace

void Server::onInitialize(const json& id, const json& params) {
  if (initialized_) throw lsp::RpcError(lsp::kInvalidRequest, "initialize sent twice");
  reply(id, initialize(params));
}

void Server::onShutdown(const json& id, const json& /*params*/) {
  shutdown_requested_ = true;
  reply(id, nullptr);
}

void Server::onInlayHint(const json& id, const lsp::InlayHintParams& p) {
  PositionEncoding enc = encoding();
  features::Options o = config().features;
  withSnapshot(id, p.text_document.uri,
               [p, enc, o](const analysis::Snapshot& s, const Document& d) {
                 auto conv = [&](const analysis::Position& bp) { return d.toLsp(bp, enc); };
                 return renderEach(features::inlayHints(s, d.toByteRange(p.range, enc), o),
                                   [&](const auto& h) { return presentation::render(h, conv); });
               });
}

void Server::onHover(const json& id, const lsp::TextDocumentPositionParams& p) {
  PositionEncoding enc = encoding();
  features::Options o = config().features;
  bool markdown = caps_.hover_markdown;
  withSnapshot(id, p.text_document.uri,
               [this, p, enc, o, markdown](const analysis::Snapshot& s, const Document& d) -> json {
                 auto h = features::hover(s, d.toByte(p.position, enc), o);
                 appendDynamicHover(h, s, d.toByte(p.position, enc), dynamicOf(p.text_document.uri),
                                    markdown);
                 if (!h) return nullptr;
                 auto conv = [&](const analysis::Position& bp) { return d.toLsp(bp, enc); };
                 return presentation::render(*h, conv, markdown);
               });
}

void Server::onCodeLens(const json& id, const lsp::DocumentParams& p) {
  PositionEncoding enc = encoding();
  features::Options o = config().features;
  withSnapshot(id, p.text_document.uri,
               [this, uri = p.text_document.uri, enc, o, budget = budgetSources()](
                   const analysis::Snapshot& s, const Document& d) {
                 json out = json::array();
                 auto conv = [&](const analysis::Position& bp) { return d.toLsp(bp, enc); };
                 for (const auto& l : features::codeLenses(s, o)) {
                   out.push_back(presentation::render(l, conv));
                 }
                 if (auto view = dynamicOf(uri)) {
                   for (const auto& l : features::dynamicLenses(s, *view)) {
                     out.push_back(presentation::render(features::toCodeLens(l), conv));
                   }
                 }
                 if (auto st = loadBudget(budget).status) {
                   for (const auto& l : budgetLenses(s, *st))
                     out.push_back(presentation::render(l, conv));
                 }
                 return out;
               });
}

void Server::onCodeAction(const json& id, const lsp::CodeActionParams& p) {
  PositionEncoding enc = encoding();
  features::Options o = config().features;
  withSnapshot(
      id, p.text_document.uri, [p, enc, o](const analysis::Snapshot& s, const Document& d) {
        auto conv = [&](const analysis::Position& bp) { return d.toLsp(bp, enc); };
        return renderEach(features::codeActions(s, d.toByteRange(p.range, enc), o, d.text()),
                          [&](const auto& a) { return presentation::render(a, d.uri(), conv); });
      });
}

void Server::onExecuteCommand(const json& id, const json& params) {
  bool deferred = false;
  json result = executeCommand(id, params, deferred);
  if (!deferred) reply(id, std::move(result));
}
void Server::withSnapshot(const json& id, const std::string& uri, Compute compute) {
  // Answered on the worker when it waits: an exception there is the server's own failure.
  auto later = [this, id, compute](const analysis::Snapshot& s, const Document& d) {
    try {
      reply(id, compute(s, d));
    } catch (const std::exception& e) {
      replyError(id, lsp::kInternalError, std::string("internal error: ") + e.what());
    }
  };
  Scheduler::Current now = scheduler_.readOrQueue(WaitingRead{id, uri, later});
  if (now.state == Scheduler::ReadState::NotOpen)
    throw lsp::RpcError(lsp::kInvalidParams, "document not open: " + uri);
  if (now.state == Scheduler::ReadState::Now) reply(id, compute(*now.snapshot, *now.doc));
}

std::shared_ptr<feedback::FeedbackProvider> Server::providerOrReplyError(const json& id) {
  std::shared_ptr<feedback::FeedbackProvider> provider;
  {
    MutexLock lock(mu_);
    provider = provider_;
  }
  if (!provider) replyError(id, lsp::kRequestFailed, "no feedback source configured");
  return provider;
}

json Server::executeCommand(const json& id, const json& params, bool& deferred) {
  auto p = params.get<lsp::ExecuteCommandParams>();
  const json& args = p.arguments;
  if (p.command == "perfhat.refresh") {
    scheduler_.post([this] {
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
      scheduler_.markAllDirty(true);
    });
    return nullptr;
  }
  if (p.command == kCollectionBudgetCommand) return collectionBudget(args);
  if (p.command == "perfhat.showData") {
    if (args.empty() || !args[0].is_string()) {
      throw lsp::RpcError(lsp::kInvalidParams, "perfhat.showData needs a function key argument");
    }
    std::string key = args[0].get<std::string>();
    deferred = true;  // the lookup may go to the handler: answer from the worker
    scheduler_.post([this, id, key, args] {
      std::shared_ptr<feedback::FeedbackProvider> provider = providerOrReplyError(id);
      if (!provider) return;
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
  if (p.command == features::kShowCallGraphCommand) {
    deferred = true;  // asks the handler and runs Graphviz: answered from the worker
    scheduler_.post([this, id, args] { showCallGraph(id, args); });
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
    std::shared_ptr<const Document> doc = scheduler_.latest(uri);
    if (!doc) throw lsp::RpcError(lsp::kInvalidParams, "document not open: " + uri);
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

}  // namespace perfhat::server
