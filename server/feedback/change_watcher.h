// The language server's push path from a feedback handler (DESIGN §5 "Sync", §6 Cache): one
// background thread per handler source long-polls `GET /v1/changes?since=C&wait_ms=N`, drops
// exactly the changed keys from the cache (FeedbackProvider::poll) and reports them, so hints
// refresh about a second after new data reaches the handler rather than at the next 30 s poll.
//
// A handler that is down is retried with exponential backoff and full jitter (many editors
// restarting with one handler do not retry in lockstep). A handler that does not honour wait_ms
// (older versions answer at once) is polled every `poll_interval` instead; after a failure the
// long-poll is tried again, in case the handler came back upgraded.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "server/feedback/provider.h"

#include "common/thread_annotations.h"

namespace perfhat::feedback {

struct WatchOptions {
  std::chrono::milliseconds wait{25000};           // per long-poll (the handler caps it at 30 s)
  std::chrono::milliseconds poll_interval{30000};  // fallback when long-poll is unsupported
  std::chrono::milliseconds min_backoff{500};
  std::chrono::milliseconds max_backoff{30000};
};

class ChangeWatcher {
 public:
  // `on_change` runs on the watcher thread after the cache was invalidated, for every answer
  // with changed keys (or `all`). `on_problem` (may be empty) gets a line for the log when a
  // poll fails or the watcher falls back to plain polling.
  using OnChange = std::function<void(const ChangesResult&)>;
  using OnProblem = std::function<void(const std::string&)>;

  ChangeWatcher(std::shared_ptr<FeedbackProvider> provider, WatchOptions options,
                OnChange on_change, OnProblem on_problem = {});
  ~ChangeWatcher();
  ChangeWatcher(const ChangeWatcher&) = delete;
  ChangeWatcher& operator=(const ChangeWatcher&) = delete;

  // Stops the thread, aborting a long-poll in flight (idempotent).
  void stop();
  // False while the watcher plain-polls an older handler (for tests and logs).
  bool longPolling() const;

 private:
  void loop();
  // Sleeps up to `d`; false when stop() was called meanwhile.
  bool sleepFor(std::chrono::milliseconds d);
  std::chrono::milliseconds backoff(int failures);

  std::shared_ptr<FeedbackProvider> provider_;
  WatchOptions options_;
  OnChange on_change_;
  OnProblem on_problem_;
  mutable Mutex mu_;
  CondVar cv_;
  bool stopping_ GUARDED_BY(mu_) = false;
  bool done_ GUARDED_BY(mu_) = false;  // the thread left its loop
  bool long_poll_ GUARDED_BY(mu_) = true;
  std::thread thread_;
};

}  // namespace perfhat::feedback
