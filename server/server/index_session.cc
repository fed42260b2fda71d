#include "server/server/index_session.h"

#include <pthread.h>

#include <cstdio>

namespace perfhat::server {

IndexSettings indexSettingsFrom(const nlohmann::json& analysis,
                                std::vector<std::string>& warnings) {
  IndexSettings s;
  if (!analysis.is_object() || !analysis.contains("index")) return s;
  const auto& j = analysis["index"];
  if (!j.is_object()) {
    warnings.push_back("config: analysis.index: expected an object");
    return s;
  }
  if (j.contains("enabled")) {
    if (j["enabled"].is_boolean())
      s.enabled = j["enabled"].get<bool>();
    else
      warnings.push_back("config: analysis.index.enabled: expected a boolean");
  }
  if (j.contains("path")) {
    if (j["path"].is_string())
      s.path = j["path"].get<std::string>();
    else
      warnings.push_back("config: analysis.index.path: expected a string");
  }
  if (j.contains("max_files")) {
    const auto& n = j["max_files"];
    if (n.is_number_integer() && n.get<int64_t>() >= 0 && n.get<int64_t>() <= 10'000'000)
      s.max_files = static_cast<size_t>(n.get<int64_t>());
    else
      warnings.push_back(
          "config: analysis.index.max_files: expected an integer from 0 to 10000000");
  }
  return s;
}

IndexSession::IndexSession(std::shared_ptr<index::WorkspaceIndex> index, std::string database,
                           std::string store_path, analysis::AnalysisOptions options,
                           size_t max_files, IndexProgressSink sink)
    : database_(std::move(database)), index_(std::move(index)) {
  std::shared_ptr<index::SummaryStore> store;
  std::string store_note;
  if (!store_path.empty()) {
    auto opened = index::SummaryStore::open(store_path);
    store = std::move(opened.value);
    if (!store)
      store_note = opened.error + "; indexing without persistence";
    else if (!store->rebuiltReason().empty())
      store_note = "index file " + store_path + " replaced: " + store->rebuiltReason();
  }
  handoff_ = std::make_unique<index::IdleHandoff>();
  index::IdleHandoff* handoff = handoff_.get();
  index::IndexerOptions o;
  o.database = database_;
  o.analysis = std::move(options);
  o.max_files = max_files;
  o.publish = [handoff](std::function<void()> work) { handoff->push(std::move(work)); };
  indexer_ = std::make_unique<index::Indexer>(index_, std::move(store), std::move(o));
  index::Indexer* indexer = indexer_.get();
  // Progress reaches the sink on the handoff's thread: the sink takes the server's locks.
  auto send = [sink](const IndexEvent& e) {
    if (sink) sink(e);
  };
  thread_ = LargeStackThread(analysisStackBytes(), [indexer, handoff, send, store_note,
                                                    idx = index_] {
    pthread_setname_np(pthread_self(), "perfhat-index");
    handoff->push([send, store_note] { send({IndexEvent::Kind::Begin, 0, 0, store_note}); });
    index::IndexStats st = indexer->run([send](const index::IndexProgress& p) {
      send({IndexEvent::Kind::Report, p.done, p.total, p.file});
    });
    // After the last file's summaries, so the count includes them.
    handoff->push([send, st, idx]() mutable {
      st.functions = idx->functionCount();
      char msg[256];
      std::snprintf(msg, sizeof msg,
                    "%zu files (%zu parsed, %zu unchanged, %zu failed), %zu functions in %.0f ms%s",
                    st.files, st.parsed, st.reused, st.failed, st.functions, st.wall_ms,
                    st.cancelled ? ", cancelled" : "");
      send({IndexEvent::Kind::End, st.parsed + st.reused + st.failed, st.files, msg});
    });
  });
}

IndexSession::~IndexSession() {
  indexer_->cancel();
  if (thread_.joinable()) thread_.join();
}

}  // namespace perfhat::server
