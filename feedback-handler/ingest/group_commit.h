// Durable ingest commits (DESIGN §5: a 2xx means the data is durable), grouped and written behind.
//
// Each request decodes on its own HTTP thread, then hands a "fill" (what adds its data to a
// batch: aggregation of the decoded request, or a ready Batch) to one committer thread and blocks.
// The committer takes every pending request at once (a group), so concurrent requests share one
// fsync, and fills them straight into the batch that gets written: no per-request batch is built
// and merged again.
//
// Write-behind (an IntakeLog and checkpoint_interval > 0, the default on SQLite): a group is
// acknowledged once the request *bodies* are durable in the intake log (one append, one
// fdatasync). Their data is then aggregated into one in-memory dirty batch (sketch bins add, so
// merging is exact), which a checkpoint writes to the aggregates together with the id of the last
// logged request it covers (meta "intake_upto"), then empties the log: each (kind, key, sub,
// minute, service, version, env) row is written once per checkpoint however many requests touched
// it. After a crash the bodies in the log above that id are replayed (decode + aggregate again),
// so nothing acknowledged is lost and nothing is counted twice. Reads call flush() first, so they
// see every acknowledged request (read-your-writes).
//
// Write-through (checkpoint_interval = 0, and always on PostgreSQL, where replicas share one
// database and a restarted replica could not tell its own intake rows from a live one's): each
// group is filled into one batch that is written to the aggregates before the group is
// acknowledged.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <string>
#include <thread>

#include "common/thread_annotations.h"
#include "feedback-handler/ingest/intake_log.h"
#include "feedback-handler/store/batch.h"
#include "feedback-handler/store/store.h"

namespace perfhat::handler {

// Tunables of the ingest commit path; the defaults are safe for a small deployment.
struct GroupCommitOptions {
  // After the first request of a group arrives, wait at most this long for more to join. 0 adds
  // no latency: requests that arrive while a commit runs still share the next commit, so grouping
  // happens exactly when requests overlap.
  std::chrono::microseconds max_batch_delay{0};
  // Requests waiting for the committer; beyond this, submitters block (backpressure on clients).
  // Also the most requests one commit takes.
  size_t max_pending = 256;
  // Write-behind: the longest acknowledged data waits before it is merged into the aggregates
  // (and /v1/changes long-polls see it). 0 = write-through.
  std::chrono::milliseconds checkpoint_interval{1000};
  // Write-behind: a checkpoint is also taken when the dirty batch holds this many rows (bounds
  // its memory and the replay after a crash).
  size_t max_dirty_rows = 100000;
  // Write-behind: a read (flush()) forces a checkpoint, but not sooner than this after the last
  // one, so clients that read after every write cannot turn write-behind into write-through.
  std::chrono::milliseconds min_checkpoint_gap{50};
};

class GroupCommitter {
 public:
  // Store meta holding the id of the last logged request a checkpoint covered.
  static constexpr const char* kIntakeUpto = "intake_upto";

  // Write-behind when `log` is given (it must outlive the committer) and the options allow it.
  GroupCommitter(Store& store, GroupCommitOptions options = {}, IntakeLog* log = nullptr);
  // Checkpoints whatever is pending, then stops the committer thread.
  ~GroupCommitter();
  GroupCommitter(const GroupCommitter&) = delete;
  GroupCommitter& operator=(const GroupCommitter&) = delete;

  // Adds a request's data to a batch; runs on the committer thread, once, while commit() waits.
  using Fill = std::function<void(Batch& into)>;

  // Blocks until the data `fill` adds is durable and returns its commit id (0 when it added
  // nothing to store); throws
  // StoreError if the commit failed (then none of it is stored). With write-behind, `body` (the
  // request as received, tagged with `format` for the replay) is what goes to the intake log
  // first; a fill without a body is written through on its own.
  uint64_t commit(Fill fill, std::string_view body = {}, int format = 0);
  // A ready batch (written through: it has no body to log).
  uint64_t commit(Batch batch);

  // Returns once everything acknowledged before the call is in the aggregates (at once with
  // write-through): true. False when checkpoints are failing (e.g. disk full): the acknowledged
  // data is safe in the intake log, but reads see only what the aggregates hold.
  bool flush();

  // Called on the committer thread after each write to the aggregates (e.g. to wake long-polls),
  // before the commit() or flush() calls that waited for that write return.
  void setOnCheckpoint(std::function<void()> hook);

  bool writeBehind() const { return write_behind_; }

  struct Counters {
    uint64_t commits = 0;      // durable transactions that acknowledged requests
    uint64_t batches = 0;      // requests (batches) acknowledged
    uint64_t checkpoints = 0;  // write-behind: writes of the dirty batch to the aggregates
    uint64_t checkpoint_failures = 0;
    uint64_t dirty_rows = 0;      // rows waiting for the next checkpoint
    uint64_t dirty_requests = 0;  // acknowledged requests not yet in the aggregates
  };
  Counters counters() const;

 private:
  // A submitter's request, on its stack while commit() waits. fill/body/format are written
  // before it is queued and read by the committer after it took it from pending_ (under mu_);
  // done/id/error are read and written only under mu_ once queued (error also by fillAll on the
  // committer, before done is set under mu_). The analysis cannot name the committer's mu_ from
  // this nested struct, so these fields carry no GUARDED_BY.
  struct Waiter {
    Fill fill;
    std::string_view body;
    int format = 0;
    bool done = false;
    uint64_t id = 0;
    std::exception_ptr error;
  };
  // The committer thread. The helpers below are entered with mu_ held and return with it held;
  // they release it around the slow work (store writes, the intake append, the hook).
  void run() EXCLUDES(mu_);
  void writeThrough(std::vector<Waiter*>& group) REQUIRES(mu_);
  // Runs every fill of `group` into `into`; a fill that throws fails its own request only.
  static void fillAll(std::vector<Waiter*>& group, Batch& into);
  void appendToIntake(std::vector<Waiter*>& group) REQUIRES(mu_);
  void checkpoint() REQUIRES(mu_);
  // Calls on_checkpoint_ (if set) with mu_ released.
  void runHook() REQUIRES(mu_);
  bool checkpointDue(std::chrono::steady_clock::time_point now) const REQUIRES(mu_);

  Store& store_;
  const GroupCommitOptions options_;
  IntakeLog* const log_;
  const bool write_behind_;
  mutable Mutex mu_;
  CondVar work_cv_;  // committer: requests pending, flush asked, or stopping
  CondVar done_cv_;  // submitters and readers: a commit or checkpoint finished
  std::deque<Waiter*> pending_ GUARDED_BY(mu_);
  bool stopping_ GUARDED_BY(mu_) = false;
  Counters counters_ GUARDED_BY(mu_);
  std::function<void()> on_checkpoint_ GUARDED_BY(mu_);

  // Write-behind state. `dirty_` and `dirty_since_` belong to the committer thread alone (it
  // fills and writes dirty_ with mu_ released), so no mutex guards them: no other thread may
  // touch them.
  Batch dirty_;
  std::chrono::steady_clock::time_point dirty_since_{};
  std::chrono::steady_clock::time_point last_checkpoint_ GUARDED_BY(mu_){};
  uint64_t appended_ GUARDED_BY(mu_) = 0;      // groups absorbed into dirty_ so far
  uint64_t checkpointed_ GUARDED_BY(mu_) = 0;  // appended_ covered by the last good checkpoint
  int flush_waiters_ GUARDED_BY(mu_) = 0;
  // Of the last checkpoint (null: it succeeded).
  std::exception_ptr checkpoint_error_ GUARDED_BY(mu_);

  std::thread thread_;
};

}  // namespace perfhat::handler
