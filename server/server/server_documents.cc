// Open documents: didOpen / didChange (debounced rebuilds) / didClose, and request
// cancellation.
#include "server/server/server.h"

#include <algorithm>

#include "server/server/server_internal.h"

namespace perfhat::server {

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
    // The first edit after a settled build is analysed at once: only edits that arrive while a
    // build is due or running wait for the debounce (they are a burst of typing).
    const bool settled = !it->second.dirty && it->second.built_doc &&
                         it->second.built_doc->version() == it->second.doc->version();
    auto updated = std::make_shared<Document>(*it->second.doc);
    if (auto err = updated->applyChanges(p.text_document.version, p.content_changes, encoding())) {
      log_.warn("didChange " + p.text_document.uri + ": " + *err + "; change ignored");
      return;
    }
    it->second.doc = std::move(updated);
    double delay =
        std::clamp(last_build_ms_ * cfg_.debounce_ratio, static_cast<double>(cfg_.debounce_min_ms),
                   static_cast<double>(cfg_.debounce_max_ms));
    if (settled) delay = 0;
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

}  // namespace perfhat::server
