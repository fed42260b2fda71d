// The language server's scheduler (in the spirit of clangd's TUScheduler): the open documents and
// their latest builds, the debounce that turns a burst of edits into one build, the one worker
// thread that runs everything touching the analyzer, the requests waiting for a document's
// snapshot (answered, cancelled or dropped), and the timer of feedback-change polling.
//
// The worker runs, highest priority first: the analyzer's reconfiguration; closing the files of
// closed documents; posted tasks, in order; the dirty document due first; the change poll when
// due. Everything it runs (the Work callbacks, waiting reads, tasks) runs without the
// scheduler's lock, so that lock is a leaf: the server may call in while holding its own.
// The workspace indexer is not scheduled here: it runs on a thread of its own at idle priority
// and yields between files while a build runs (Indexer::foregroundBegin, ClangAnalyzer).
#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/thread_annotations.h"
#include "server/analysis/snapshot.h"
#include "server/feedback/clock.h"
#include "server/server/document.h"
#include "server/server/large_stack_thread.h"

namespace perfhat::features {
struct DynamicView;
}

namespace perfhat::server {

// The time the scheduler reads (the feedback cache's clock) and how its worker sleeps:
// steady_clock in the server; tests inject a manual clock (advance it, then Scheduler::wake()).
class SchedulerClock : public feedback::Clock {
 public:
  using TimePoint = time_point;
  // Waits on `cv` (with `lock` held) until notified or `deadline` has passed on this clock.
  virtual void waitUntil(CondVar& cv, MutexLock& lock, TimePoint deadline) = 0;
};
SchedulerClock& steadySchedulerClock();

// How long an edit waits for more edits before it is analysed (clangd style): the last build's
// time × ratio, clamped to [min, max].
struct DebouncePolicy {
  double ratio = 1.0;
  int min_ms = 50;
  int max_ms = 500;
  std::chrono::microseconds delay(double last_build_ms) const;
};

// One build of a document: the snapshot and what the server keeps beside it.
struct Build {
  analysis::SnapshotPtr snapshot;
  std::vector<std::string> feedback_keys;  // asked of the feedback provider (sorted, unique)
  std::shared_ptr<const features::DynamicView> dynamic;  // production's call graph; may be null
  double ms = 0;                                         // the analysis' time: the debounce's basis
};

// A request that waits until its document's snapshot is built from the latest text.
struct WaitingRead {
  nlohmann::json id;  // cancel() finds it by this
  std::string uri;
  std::function<void(const analysis::Snapshot&, const Document&)> run;  // on the worker
};

class Scheduler {
 public:
  using TimePoint = SchedulerClock::TimePoint;

  // What the worker does. Each runs on the worker thread, without the scheduler's lock.
  struct Work {
    std::function<void()> configure;                     // the analyzer's settings changed
    std::function<void(const std::string& path)> close;  // a closed document's file
    std::function<Build(const Document& doc)> build;
    // After a build was stored and the reads waiting for it have run; `before` is the
    // document's previous snapshot (null after its first build).
    std::function<void(const std::string& uri, const Build& build, const Document& doc,
                       const analysis::SnapshotPtr& before)>
        built;
    std::function<void()> poll;     // feedback changes, when the poll timer is due
    std::function<void()> refresh;  // the rebuilds asked with a refresh have all finished
    // With PERFHAT_EDIT_TRACE: a build's stages (edit_trace.h), after it; may be empty.
    std::function<void(const std::string& uri, int version, const std::string& stages)> traced;
  };

  explicit Scheduler(Work work, SchedulerClock& clock = steadySchedulerClock());
  ~Scheduler();  // stops and joins the worker
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Starts the worker on a stack of `stack_bytes`, named `name` (bench/index reads its CPU time).
  void start(size_t stack_bytes, const char* name);
  // Ends the worker after what it is running; returns the reads that were waiting (the caller
  // answers them). Idempotent: later calls return nothing.
  std::vector<WaitingRead> requestStop() EXCLUDES(mu_);
  void join();
  // Makes the worker look at the clock again (after a manual clock moved).
  void wake() EXCLUDES(mu_);

  // ---- Documents (the reader thread) ----
  // A newly opened document (or one opened again): built at once, without debounce.
  void open(std::shared_ptr<const Document> doc) EXCLUDES(mu_);
  // The latest text of an open document; null when it is not open.
  std::shared_ptr<const Document> latest(const std::string& uri) const EXCLUDES(mu_);
  // An edited text. The first edit after a settled build is analysed at once; edits that arrive
  // while a build is due or running wait for the debounce (they are a burst of typing). False
  // when the document is not open.
  bool edit(std::shared_ptr<const Document> doc) EXCLUDES(mu_);
  // Closes a document: its file is closed on the worker, and the reads waiting for it are
  // returned for the caller to answer. std::nullopt when it was not open.
  std::optional<std::vector<WaitingRead>> close(const std::string& uri) EXCLUDES(mu_);

  // ---- Reads ----
  enum class ReadState { NotOpen, Now, Queued };
  struct Current {
    ReadState state = ReadState::NotOpen;
    analysis::SnapshotPtr snapshot;       // with Now
    std::shared_ptr<const Document> doc;  // with Now: the text the snapshot was built from
  };
  // The document's snapshot when it is built from the latest text (Now, and `read` is not
  // used); otherwise `read` waits and runs on the worker after the build that is (Queued).
  Current readOrQueue(WaitingRead read) EXCLUDES(mu_);
  // Takes a waiting read out of the queue (the caller answers it); nullopt when it already ran
  // or was never queued.
  std::optional<WaitingRead> cancel(const nlohmann::json& id) EXCLUDES(mu_);
  std::shared_ptr<const features::DynamicView> dynamicOf(const std::string& uri) const
      EXCLUDES(mu_);
  // The open documents' latest snapshots (null for one not built yet).
  std::vector<analysis::SnapshotPtr> snapshots() const EXCLUDES(mu_);

  // ---- What makes work ----
  void post(std::function<void()> task) EXCLUDES(mu_);
  // Rebuilds every open document now; with refresh_after, Work::refresh follows the rebuilds.
  void markAllDirty(bool refresh_after) EXCLUDES(mu_);
  // Rebuilds now the open documents `uses` selects (given the uri and its last build, whose
  // snapshot is null before the first); Work::refresh follows when any was. Returns how many.
  size_t markDirtyWhere(const std::function<bool(const std::string& uri, const Build& last)>& uses)
      EXCLUDES(mu_);
  void reconfigureAnalyzer() EXCLUDES(mu_);
  void setDebounce(DebouncePolicy policy) EXCLUDES(mu_);
  // Polling of feedback changes while documents are open: every `interval` (0 = off) when
  // `enabled`. restart_timer: the next poll is one interval (at least a second) from now.
  void setPolling(bool enabled, std::chrono::seconds interval, bool restart_timer) EXCLUDES(mu_);

  // For tests and benchmarks: blocks until no work is due or running, or `timeout` passes (on
  // the scheduler's clock). True when idle.
  bool waitIdle(std::chrono::milliseconds timeout) EXCLUDES(mu_);
  // How long the text of the last build waited for the worker (ms on the scheduler's clock, the
  // edit trace's "queued"): from its edit, or from when a refresh or config change made it dirty.
  double lastQueuedMs() const EXCLUDES(mu_);

 private:
  struct DocState {
    std::shared_ptr<const Document> doc;        // latest text
    std::shared_ptr<const Document> built_doc;  // text `last` was built from
    Build last;
    bool dirty = false;
    TimePoint due;
    TimePoint changed;  // when it began to wait: edited, or made dirty (the trace's queue time)
  };

  // What the worker runs next, taken out of the state under the lock and run without it.
  struct Job {
    std::function<void()> run;  // empty: nothing is due
    bool is_build = false;      // Work::refresh may follow
    bool notify_after = false;  // tells waitIdle() (and reads' observers) it ran
  };
  void loop() EXCLUDES(mu_);
  // The highest-priority work that is due.
  Job nextJob() REQUIRES(mu_);
  // Builds `doc`, stores the build, runs the reads waiting for it, then Work::built.
  void build(const std::string& uri, const std::shared_ptr<const Document>& doc, TimePoint changed)
      EXCLUDES(mu_);
  // Makes `st` due now (a rebuild asked for, not an edit).
  void markDirtyNow(DocState& st) REQUIRES(mu_);
  bool anyDirty() const REQUIRES(mu_);
  bool polling() const REQUIRES(mu_);
  // Moves the reads waiting for `uri` out of the queue.
  std::vector<WaitingRead> takeReads(const std::string& uri) REQUIRES(mu_);

  Work work_;
  SchedulerClock& clock_;

  mutable Mutex mu_;
  CondVar cv_;
  std::map<std::string, DocState> docs_ GUARDED_BY(mu_);
  std::vector<WaitingRead> waiting_ GUARDED_BY(mu_);
  std::deque<std::function<void()>> tasks_ GUARDED_BY(mu_);
  std::vector<std::string> closed_paths_ GUARDED_BY(mu_);  // for Work::close
  bool configure_due_ GUARDED_BY(mu_) = true;              // the analyzer starts unconfigured
  bool refresh_after_build_ GUARDED_BY(mu_) = false;
  bool busy_ GUARDED_BY(mu_) = false;  // the worker is running something
  bool stopping_ GUARDED_BY(mu_) = false;
  double last_build_ms_ GUARDED_BY(mu_) = 0;
  double last_queued_ms_ GUARDED_BY(mu_) = 0;
  DebouncePolicy debounce_ GUARDED_BY(mu_);
  bool poll_enabled_ GUARDED_BY(mu_) = false;
  std::chrono::seconds poll_interval_ GUARDED_BY(mu_){0};
  TimePoint next_poll_ GUARDED_BY(mu_);

  LargeStackThread worker_;
};

}  // namespace perfhat::server
