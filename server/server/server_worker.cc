// What the scheduler's worker does for the server (scheduler.h decides when): configures the
// analyzer, builds a document (fetching its feedback in the background), publishes what a build
// found, and polls for feedback changes.
#include "server/server/server.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "common/function_key.h"
#include "server/features/features.h"
#include "server/presentation/render.h"
#include "server/server/edit_trace.h"
#include "server/server/server_internal.h"

namespace perfhat::server {

namespace {

// An empty snapshot carrying one problem, when the analysis itself failed.
analysis::SnapshotPtr failedSnapshot(const AnalysisInput& in, const std::string& message) {
  auto s = std::make_shared<analysis::Snapshot>();
  s->path = in.path;
  s->version = in.version;
  analysis::ParseProblem p;
  p.range = {{0, 0}, {0, 0}};
  p.message = message;
  p.origin = analysis::ParseProblem::Origin::Analysis;
  s->problems.push_back(std::move(p));
  return s;
}

}  // namespace

Scheduler::Work Server::schedulerWork() {
  Scheduler::Work w;
  w.configure = [this] {
    Config cfg;
    std::string root;
    {
      MutexLock lock(mu_);
      cfg = cfg_;
      root = root_;
    }
    analyzer_->configure(cfg, root);
  };
  w.close = [this](const std::string& path) { analyzer_->close(path); };
  w.build = [this](const Document& doc) { return rebuild(doc); };
  w.built = [this](const std::string& uri, const Build& b, const Document& doc,
                   const analysis::SnapshotPtr& before) { afterBuild(uri, b, doc, before); };
  w.poll = [this] { pollChanges(); };
  w.refresh = [this] { sendRefresh(); };
  w.traced = [this](const std::string& uri, int version, const std::string& stages) {
    log_.info(fmt::format("edit trace {} v{}: {}", uri, version, stages));
  };
  return w;
}

void Server::updatePolling(bool restart_timer) {
  scheduler_.setPolling(provider_ && !watcher_, std::chrono::seconds(cfg_.changes_poll_s),
                        restart_timer);
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

bool Server::waitIdle(std::chrono::milliseconds timeout) { return scheduler_.waitIdle(timeout); }

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
  auto hit = [&](const std::string& k) {
    return touched.count(k) > 0 || touched_names.count(qualifiedName(k)) > 0;
  };
  const size_t rebuilt = scheduler_.markDirtyWhere([&](const std::string&, const Build& last) {
    return r.all || !last.snapshot ||
           std::any_of(last.feedback_keys.begin(), last.feedback_keys.end(), hit);
  });
  log_.info(fmt::format("feedback changed ({} keys); re-analysing {} open document(s)",
                        r.all ? std::string("all") : std::to_string(r.keys.size()), rebuilt));
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

std::string Server::createProgressToken(const std::string& prefix) {
  const std::string token = prefix + std::to_string(Clock::now().time_since_epoch().count());
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
  return created->load() == 1 ? token : std::string();
}

void Server::runFetch(const std::shared_ptr<FetchJob>& job, bool progress) {
  const std::vector<std::string>& keys = job->keys;
  feedback::FeedbackProvider& provider = *job->provider;
  // $/progress around the bulk fetch. The token must be created by the client first; wait
  // (bounded) for its answer so a slow client never stalls the fetch for long.
  const std::string token = progress ? createProgressToken("perfhat-fetch-") : std::string();
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
  if (refresh) scheduler_.markAllDirty(true);
}

Build Server::rebuild(const Document& doc) {
  AnalysisInput in{doc.path(), doc.text(), doc.version()};
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
    log_.error("analysis of " + doc.path() + " failed: " + e.what());
    snap = failedSnapshot(in, e.what());
  }
  if (!snap) snap = failedSnapshot(in, "no result");
  double ms = msSince(t0);
  for (const auto& w : warnings) {
    log_.warn(doc.path() + ": " + w);
    showMessageOnce("warning:" + w, lsp::MessageType::Warning, "perfhat: " + w);
  }
  log_.info(fmt::format(
      "built {} v{} in {:f} ms (parse {:f}, fetch {:f}, deployed text {:f}, analysis {:f})",
      doc.path(), doc.version(), ms, snap->parse_ms, snap->fetch_ms, snap->deployed_ms,
      snap->analysis_ms));
  DynamicRead dynamic = readDynamic(*snap);
  std::sort(used_keys.begin(), used_keys.end());
  used_keys.erase(std::unique(used_keys.begin(), used_keys.end()), used_keys.end());
  EditTrace::mark("build-rest");
  return Build{snap, std::move(used_keys), dynamic.view, ms};
}

void Server::afterBuild(const std::string& uri, const Build& build, const Document& doc,
                        const analysis::SnapshotPtr& before) {
  publishDiagnostics(uri, *build.snapshot, doc);
  EditTrace::mark("diagnostics");
  refreshDependents(uri, before, *build.snapshot);
  EditTrace::mark("dependents");
}

void Server::publishDiagnostics(const std::string& uri, const analysis::Snapshot& s,
                                const Document& d) {
  features::Options o = config().features;
  PositionEncoding enc = encoding();
  auto conv = [&](const analysis::Position& bp) { return d.toLsp(bp, enc); };
  lsp::PublishDiagnosticsParams p{uri, d.version(), {}};
  for (const auto& diag : features::diagnostics(s, o))
    p.diagnostics.push_back(presentation::render(diag, conv));
  if (auto view = dynamicOf(uri)) {
    for (const auto& n : features::neverCalled(s, *view))
      p.diagnostics.push_back(presentation::render(features::toDiagnostic(n), conv));
  }
  notify("textDocument/publishDiagnostics", p);
}

}  // namespace perfhat::server
