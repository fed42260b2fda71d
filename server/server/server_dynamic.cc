// Server methods of the production call graph (issue #24): reading it for a build, handing it
// to the features, and the perfhat.showCallGraph command.
#include "server/server/server.h"

#include <algorithm>

#include "server/features/dynamic_text.h"

namespace perfhat::server {

DynamicRead Server::readDynamic(const analysis::Snapshot& s) {
  std::shared_ptr<feedback::FeedbackProvider> provider;
  std::string root;
  bool busy = false;
  {
    MutexLock lock(mu_);
    provider = provider_;
    root = root_;
    // A fetch still waiting on the handler: do not knock again from the worker (see fetch());
    // this build shows the cache, and the documents are rebuilt when that fetch lands.
    busy = fetch_job_ && !fetch_job_->done;
    if (busy) fetch_job_->refresh_when_done = true;
  }
  std::vector<analysis::SnapshotPtr> open = scheduler_.snapshots();
  // The snapshot being built is not stored yet: its own functions are definitions too.
  open.push_back(std::shared_ptr<const analysis::Snapshot>(&s, [](const analysis::Snapshot*) {}));
  DynamicRead r = readDynamicView(provider.get(), s, open, root, busy,
                                  [this](const std::vector<std::string>& k) {
                                    std::vector<FeedbackItem> items;
                                    const auto view = fetch(k);  // alive while copied
                                    for (const FeedbackItem* item : view->all())
                                      items.push_back(*item);
                                    return items;
                                  });
  if (r.status != feedback::FetchStatus::Ok) {
    // The batchGet path reports an outage to the user; the call graph only logs it.
    log_.info("dynamic metrics: " + r.error + " (call-graph lenses show the cache)");
  }
  return r;
}

std::shared_ptr<const features::DynamicView> Server::dynamicOf(const std::string& uri) {
  return scheduler_.dynamicOf(uri);
}

// Arguments: [function key, depth (optional, default 2)]. Answers {"path","format","uri"} and
// asks the client to show the file (window/showDocument) when it can.
void Server::showCallGraph(const json& id, const json& args) {
  if (args.empty() || !args[0].is_string() || args[0].get<std::string>().empty()) {
    replyError(id, lsp::kInvalidParams,
               std::string(features::kShowCallGraphCommand) + " needs a function key argument");
    return;
  }
  const std::string key = args[0].get<std::string>();
  int depth = 2;
  if (args.size() > 1 && args[1].is_number_integer()) {
    depth = std::clamp(args[1].get<int>(), 0, 10);  // the handler's bound
  }
  std::shared_ptr<feedback::FeedbackProvider> provider = providerOrReplyError(id);
  if (!provider) return;
  feedback::DynamicResult g = provider->dynamicGraph(key, depth);
  if (g.unsupported) {
    replyError(id, lsp::kRequestFailed,
               "the feedback source has no call graph (" + provider->source().describe() +
                   "; a handler older than /v1/dynamic, or a dataset file)");
    return;
  }
  if (!g.ok()) {
    replyError(id, lsp::kRequestFailed, "call graph of " + key + ": " + g.error);
    return;
  }
  CallGraphFile file = writeCallGraph(key, g.dot, callGraphDirectory());
  if (!file.error.empty()) {
    replyError(id, lsp::kRequestFailed, "call graph of " + key + ": " + file.error);
    return;
  }
  if (!file.note.empty()) log_.info("call graph shown as dot text: " + file.note);
  const std::string uri = lsp::pathToUri(file.path);
  json result = {{"path", file.path}, {"format", file.format}, {"uri", uri}};
  if (!file.note.empty()) result["note"] = file.note;
  reply(id, result);
  if (caps_.show_document) {
    request("window/showDocument", {{"uri", uri}, {"takeFocus", true}}, nullptr);
  } else {
    showMessageOnce("callgraph:" + file.path, lsp::MessageType::Info,
                    "perfhat: call graph of " + key + " written to " + file.path);
  }
}

}  // namespace perfhat::server
