// Open documents: didOpen / didChange (debounced rebuilds) / didClose, and request
// cancellation.
#include "server/server/server.h"

#include "server/server/server_internal.h"

namespace perfhat::server {

void Server::didOpen(const json& params) {
  auto p = params.get<lsp::DidOpenTextDocumentParams>();
  auto path = lsp::uriToPath(p.text_document.uri);
  if (!path) {
    log_.warn("didOpen: not a file URI, not analysed: " + p.text_document.uri);
    return;
  }
  scheduler_.open(std::make_shared<const Document>(p.text_document.uri, *path,
                                                   p.text_document.version, p.text_document.text));
}

void Server::didChange(const json& params) {
  auto p = params.get<lsp::DidChangeTextDocumentParams>();
  // Only this thread changes a document's text, so the latest stays the latest until edit().
  std::shared_ptr<const Document> latest = scheduler_.latest(p.text_document.uri);
  if (!latest) {
    log_.warn("didChange for a document that is not open: " + p.text_document.uri);
    return;
  }
  auto updated = std::make_shared<Document>(*latest);
  if (auto err = updated->applyChanges(p.text_document.version, p.content_changes, encoding())) {
    log_.warn("didChange " + p.text_document.uri + ": " + *err + "; change ignored");
    return;
  }
  scheduler_.edit(std::move(updated));
}

void Server::didClose(const json& params) {
  auto p = params.get<lsp::DidCloseTextDocumentParams>();
  std::optional<std::vector<WaitingRead>> orphans = scheduler_.close(p.text_document.uri);
  if (!orphans) return;
  for (const auto& q : *orphans) {
    replyError(q.id, lsp::kContentModified, "document closed: " + p.text_document.uri);
  }
  notify("textDocument/publishDiagnostics",
         lsp::PublishDiagnosticsParams{p.text_document.uri, std::nullopt, {}});
}

void Server::cancel(const json& params) {
  auto p = params.get<lsp::CancelParams>();
  // Already answered (or never seen): nothing to do.
  if (auto cancelled = scheduler_.cancel(p.id))
    replyError(cancelled->id, lsp::kRequestCancelled, "request cancelled");
}

}  // namespace perfhat::server
