// The server's side of the workspace index (issue #25, docs/index.md): `$/progress` for the
// background indexer, "show callers with predicted impact", and refreshing the open callers of
// a function whose body an edit changed.
#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <unordered_set>
#include <vector>

#include "server/features/callers_text.h"
#include "server/index/callers_impact.h"
#include "server/index/changed_keys.h"
#include "server/index/indexer.h"
#include "server/server/server.h"

namespace perfhat::server {

using Clock = std::chrono::steady_clock;

void Server::indexProgress(const IndexEvent& e) {
  if (e.kind == IndexEvent::Kind::End) log_.info("workspace index: " + e.message);
  if (e.kind == IndexEvent::Kind::Begin && !e.message.empty()) log_.warn(e.message);
  if (!initialized_ || !caps_.work_done_progress) return;
  if (e.kind == IndexEvent::Kind::Begin) {
    const std::string token = createProgressToken("perfhat-index-");
    {
      MutexLock lock(mu_);
      index_token_ = token;
      index_last_report_ = Clock::time_point();
    }
    if (!token.empty())
      notify("$/progress",
             {{"token", token},
              {"value", lsp::WorkDoneProgress{lsp::WorkDoneProgress::Kind::Begin,
                                              "perfhat: indexing the workspace", "", 0}}});
    return;
  }
  std::string token;
  {
    MutexLock lock(mu_);
    token = index_token_;
    if (token.empty()) return;
    if (e.kind == IndexEvent::Kind::Report) {
      // At most four reports a second: a cached pass finishes hundreds of files in one.
      if (Clock::now() - index_last_report_ < std::chrono::milliseconds(250)) return;
      index_last_report_ = Clock::now();
    } else {
      index_token_.clear();
    }
  }
  if (e.kind == IndexEvent::Kind::Report) {
    int pct = e.total ? static_cast<int>(100 * e.done / e.total) : 0;
    notify("$/progress",
           {{"token", token},
            {"value", lsp::WorkDoneProgress{lsp::WorkDoneProgress::Kind::Report, "",
                                            fmt::format("{}/{} files", e.done, e.total), pct}}});
  } else {
    notify("$/progress", {{"token", token},
                          {"value", lsp::WorkDoneProgress{lsp::WorkDoneProgress::Kind::End, "",
                                                          e.message, std::nullopt}}});
  }
}

void Server::refreshDependents(const std::string& uri, const analysis::SnapshotPtr& before,
                               const analysis::Snapshot& after) {
  if (!before) return;  // first build: the index already held the saved text
  // A function both snapshots hold (its analysis reused) is the same on both sides, and taking
  // one element off both sides of a key leaves them as equal or unequal as they were: only the
  // others are compared.
  std::unordered_set<const analysis::FunctionInfo*> now;
  now.reserve(after.functions.size());
  for (const auto& f : after.functions) now.insert(&f);
  std::vector<const analysis::FunctionInfo*> was, is;
  std::unordered_set<const analysis::FunctionInfo*> both;
  for (const auto& f : before->functions) {
    if (now.count(&f))
      both.insert(&f);
    else
      was.push_back(&f);
  }
  for (const auto& f : after.functions)
    if (!both.count(&f)) is.push_back(&f);
  const std::vector<std::string> keys =
      index::changedKeys(was, is, [](const analysis::FunctionInfo* f) {
        return std::pair<std::string_view, uint64_t>(f->key, f->body_hash);
      });
  const std::set<std::string> changed(keys.begin(), keys.end());
  if (changed.empty()) return;
  const size_t marked = scheduler_.markDirtyWhere([&](const std::string& other, const Build& last) {
    return other != uri && std::any_of(last.feedback_keys.begin(), last.feedback_keys.end(),
                                       [&](const std::string& k) { return changed.count(k) > 0; });
  });
  if (marked) {
    log_.info(fmt::format("{} function(s) changed in {}; re-analysing {} open caller document(s)",
                          changed.size(), uri, marked));
  }
}

json Server::showCallers(const json& id, const json& args) {
  if (args.size() < 2 || !args[0].is_string() || !args[1].is_object())
    throw lsp::RpcError(lsp::kInvalidParams, "perfhat.showCallers needs [uri, {line, character}]");
  std::string uri = args[0].get<std::string>();
  auto pos = args[1].get<lsp::Position>();
  std::shared_ptr<index::WorkspaceIndex> idx = analyzer_->workspaceIndex();
  PositionEncoding enc = encoding();
  withSnapshot(id, uri, [uri, pos, idx, enc](const analysis::Snapshot& s, const Document& d) {
    analysis::Position p = d.toByte(pos, enc);
    const analysis::FunctionInfo* fn = nullptr;
    for (const auto& f : s.functions)
      if (f.range.contains(p) && (!fn || fn->range.contains(f.range.start))) fn = &f;
    if (!fn) throw lsp::RpcError(lsp::kInvalidParams, "no function at this position");
    if (!idx) throw lsp::RpcError(lsp::kRequestFailed, "no workspace index");
    index::CallersReport r = index::callersWithImpact(*fn, *idx);
    json callers = json::array();
    json locations = json::array();
    for (const auto& c : r.callers) {
      // Positions in another file: converted with its text on disk (the saved text).
      std::string text = index::readFile(c.file).value_or("");
      LineTable lines(text);
      auto conv = [&](const analysis::Position& bp) { return toLsp(text, lines, bp, enc); };
      std::string curi = lsp::pathToUri(c.file);
      json sites = json::array();
      for (const auto& site : c.sites) {
        json range = lsp::Range{conv(site.range.start), conv(site.range.end)};
        json assumptions = json::array();
        for (const auto& a : site.assumptions)
          assumptions.push_back(features::siteAssumptionText(a));
        sites.push_back(
            {{"range", range}, {"executions", site.executions}, {"assumptions", assumptions}});
        locations.push_back({{"uri", curi}, {"range", range}});
      }
      callers.push_back({{"key", c.key},
                         {"name", c.name},
                         {"uri", curi},
                         {"range", lsp::Range{conv(c.range.start), conv(c.range.end)}},
                         {"executions", c.executions},
                         {"impact_ns", r.change_known ? json(c.impact_ns) : json(nullptr)},
                         {"sites", sites}});
    }
    return json{{"key", r.key},
                {"name", r.name},
                {"change_ns", r.change_known ? json(r.change_ns) : json(nullptr)},
                {"basis", features::callersBasisText(r)},
                {"callers", callers},
                {"locations", locations},
                {"markdown", features::callersMarkdown(r)}};
  });
  return nullptr;
}

}  // namespace perfhat::server
