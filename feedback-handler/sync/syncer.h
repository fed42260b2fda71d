// Local-mode pull (DESIGN §5 "Sync"): for each upstream handler, fetch every aggregate changed
// since the last cursor (GET /v1/export?since=), and persist it with the cursor in one
// transaction, tagged with the upstream as origin, replacing earlier pulls of the same rows.
// Reads then merge origins exactly (sketch merge). An unreachable upstream is retried with
// exponential backoff while the others and the local read API keep working.
//
// An upstream is not trusted to behave: each answer is read up to `max_response_bytes` after
// gunzip (a gzip bomb is cut off there), each pull of one upstream ends at `pull_deadline_s`
// however slowly the answer drips (pages committed before it are kept), and stop() interrupts
// a pull in progress at once.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "common/thread_annotations.h"
#include "feedback-handler/store/store.h"

namespace httplib {
class Client;
}

namespace perfhat::handler {

struct Upstream {
  std::string url;    // http://host:port
  std::string token;  // bearer token, may be empty
};

// "URL[,TOKEN]" → Upstream; throws std::invalid_argument for a URL that is not
// http(s)://host[:port].
Upstream parseUpstream(const std::string& spec);

struct SyncOptions {
  double interval_s = 30;
  double max_backoff_s = 300;
  double timeout_s = 10;                   // connecting, and each read without progress
  double pull_deadline_s = 120;            // one upstream's whole pull (all its pages)
  size_t max_response_bytes = 256u << 20;  // one export page, after gunzip
  size_t page_rows = 20000;
};

struct UpstreamStatus {
  std::string url;
  bool ok = false;
  std::string last_error;
  int64_t last_success_ns = 0;  // 0 = never
  uint64_t cursor = 0;
  uint64_t rows_pulled = 0;  // total since start
  int failures = 0;          // consecutive
};

class Syncer {
 public:
  Syncer(Store& store, std::vector<Upstream> upstreams, SyncOptions options);
  ~Syncer();
  void start();  // background loop
  // Interrupts pulls in progress, ends the loop; later syncNow() calls pull nothing.
  void stop();
  // Pulls every upstream now (ignoring backoff) and returns their status.
  std::vector<UpstreamStatus> syncNow();
  std::vector<UpstreamStatus> status() const;
  // Seconds since the oldest upstream's last successful pull (data age); -1 if never synced.
  double dataAgeSeconds() const;
  // Called after every successful commit of pulled data (the HTTP server wakes its change
  // long-polls with it); nullptr removes it. Safe to call while the syncer runs.
  void setOnCommit(std::function<void()> hook);

 private:
  void pull(size_t i) REQUIRES(pull_mu_) EXCLUDES(mu_);
  // Upstream i's /v1/export pages from `cursor` on through `cli`, each committed as it comes
  // (`rows` counts the aggregate rows written). Throws at the first page that fails;
  // `expired`: the pull's watchdog stopped `cli`.
  void pullPages(httplib::Client& cli, size_t i, uint64_t cursor, const std::atomic<bool>& expired,
                 uint64_t& rows) REQUIRES(pull_mu_) EXCLUDES(mu_);
  // A pull's outcome ("" or its error) into upstream i's status and its next attempt.
  void recordPull(size_t i, uint64_t rows, const std::string& error) EXCLUDES(mu_);
  void loop() EXCLUDES(mu_, pull_mu_);
  bool isStopping() const EXCLUDES(mu_);

  Store& store_;
  std::vector<Upstream> upstreams_;
  SyncOptions options_;
  mutable Mutex mu_;
  Mutex pull_mu_ ACQUIRED_BEFORE(mu_);  // one pull round at a time
  std::vector<UpstreamStatus> status_ GUARDED_BY(mu_);
  std::vector<int64_t> next_attempt_ns_ GUARDED_BY(mu_);
  CondVar cv_;         // the loop's wait
  CondVar cancel_cv_;  // pull watchdogs' wait
  bool stopping_ GUARDED_BY(mu_) = false;
  std::thread thread_;
  Mutex hook_mu_;  // held while the hook runs, so removing it waits for a running call
  std::function<void()> on_commit_ GUARDED_BY(hook_mu_);
};

}  // namespace perfhat::handler
