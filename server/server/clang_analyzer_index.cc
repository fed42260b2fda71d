// ClangAnalyzer and the workspace index (issue #25, docs/index.md): starting the background
// indexer for the workspace's compile database, indexing on demand for --check, and marking
// calls whose callee in another file no longer matches what production ran.
#include <filesystem>
#include <utility>

#include "server/analysis/compile_db.h"
#include "server/server/clang_analyzer.h"

namespace perfhat::server {
namespace fs = std::filesystem;

ClangAnalyzer::~ClangAnalyzer() { index_session_.reset(); }  // cancels and joins the pass

void ClangAnalyzer::close(const std::string& path) {
  tus_.erase(path);
  deployed_units_.erase(path);
  index_->closeOpen(path);  // the indexed (saved) text of the file stands again
}

std::string ClangAnalyzer::indexDatabase(const std::string& root) const {
  std::error_code ec;
  auto isFile = [&](const fs::path& p) { return fs::is_regular_file(p, ec); };
  if (!options_.compile_commands.empty()) {
    fs::path p = options_.compile_commands;
    if (p.is_relative() && !root.empty()) p = fs::path(root) / p;
    if (fs::is_directory(p, ec)) p /= "compile_commands.json";
    return isFile(p) ? fs::absolute(p, ec).lexically_normal().string() : "";
  }
  if (root.empty()) return "";
  for (const fs::path& p : {fs::path(root) / "compile_commands.json",
                            fs::path(root) / "build" / "compile_commands.json"})
    if (isFile(p)) return fs::absolute(p, ec).lexically_normal().string();
  return "";
}

void ClangAnalyzer::startIndex(const Config& cfg, const std::string& root) {
  IndexSettings settings = indexSettingsFrom(cfg.analysis, config_warnings_);
  std::string database = settings.enabled && background_index_ ? indexDatabase(root) : "";
  std::string store;
  if (!database.empty())
    store = !settings.path.empty()
                ? settings.path
                : (fs::path(root.empty() ? fs::path(database).parent_path().string() : root) /
                   ".cache" / "perfhat" / "index.sqlite")
                      .string();
  if (index_session_ && settings == index_settings_ && index_session_->database() == database &&
      store == index_store_)
    return;
  index_session_.reset();
  index_settings_ = settings;
  index_store_ = store;
  if (database.empty()) return;
  index_session_ = std::make_unique<IndexSession>(index_, database, store, options_,
                                                  settings.max_files, index_sink_);
}

index::IndexStats ClangAnalyzer::indexNow(const std::string& database, const std::string& root) {
  std::vector<std::string> ignored;
  Config none;
  IndexSettings settings = indexSettingsFrom(none.analysis, ignored);
  std::string store = (fs::path(root) / ".cache" / "perfhat" / "index.sqlite").string();
  std::shared_ptr<index::SummaryStore> s = index::SummaryStore::open(store).value;
  index::IndexerOptions o;
  o.database = database;
  o.analysis = options_;
  o.max_files = settings.max_files;
  o.idle_priority = false;
  index::Indexer indexer(index_, std::move(s), o);
  return indexer.run();
}

const std::unordered_map<std::string, uint64_t>* ClangAnalyzer::deployedHashes(
    const std::string& file, const std::string& revision) {
  auto key = std::make_pair(file, revision);
  if (auto it = deployed_hashes_.find(key); it != deployed_hashes_.end()) return &it->second;
  if (deployed_hashes_failed_.count(key)) return nullptr;
  const Result<std::string> text = deployed_source_.textAt(file, revision);
  std::unique_ptr<analysis::TranslationUnit> tu;
  if (text) {
    analysis::CompileCommand cc =
        analysis::compileCommandFor(file, options_.compile_commands, options_.fallback_flags);
    tu = analysis::TranslationUnit::parse(file, text.value, cc.args,
                                          analysis::TranslationUnit::Mode::kOneShot)
             .value;
  }
  if (!tu) {
    deployed_hashes_failed_.insert(key);
    return nullptr;
  }
  auto& hashes = deployed_hashes_[key];
  for (const auto& f : analysis::buildAst(*tu, options_).functions) hashes[f.key] = f.body_hash;
  return &hashes;
}

void ClangAnalyzer::markChangedCallees(analysis::Snapshot& snap,
                                       const analysis::FeedbackView& view) {
  if (options_.deployed_revision == "none") return;
  // Read through const: writing the list copies a function another holder shares (the
  // inference's memory of its last results), so only a function with a node to mark is copied.
  // `f` stays valid after that copy: the other holder keeps the original.
  const auto& functions = std::as_const(snap.functions);
  for (size_t fi = 0; fi < functions.size(); ++fi) {
    const analysis::FunctionInfo& f = functions[fi];
    for (size_t ni = 0; ni < f.nodes.size(); ++ni) {
      const analysis::Node& n = f.nodes[ni];
      if (n.kind != analysis::NodeKind::Call || !n.measured || n.call.key.empty()) continue;
      index::FunctionPtr body = index_->find(n.call.key);
      if (!body || body->file.empty() || body->file == snap.path) continue;
      const FeedbackItem* item = view.find(n.call.key);
      std::vector<std::string> versions = item ? item->versions : std::vector<std::string>{};
      if (versions.empty() && options_.deployed_revision.empty()) continue;
      std::string revision =
          deployed_source_.revisionFor(body->file, versions, options_.deployed_revision);
      if (revision.empty()) continue;
      const auto* hashes = deployedHashes(body->file, revision);
      if (!hashes) continue;
      auto it = hashes->find(n.call.key);
      if (it == hashes->end() || it->second == body->body_hash) continue;
      snap.functions.mut(fi).nodes[ni].call.callee_changed =
          analysis::CallFacts::ChangedBody{body->name, body->file, revision};
    }
  }
}

}  // namespace perfhat::server
