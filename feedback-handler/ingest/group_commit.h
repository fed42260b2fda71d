// Group commit for ingest (DESIGN §5: a 2xx means the data is durable).
//
// Each request decodes and aggregates on its own HTTP thread, then hands its Batch to one
// committer thread and blocks. The committer takes every pending batch, merges them exactly
// (sketch bins add, so the merged row equals the sum of the rows), writes the result in ONE
// durable transaction — each (kind, key, sub, minute, service, version, env) row once — and then
// wakes all the requests of that group. Concurrent requests thus share one fsync and one upsert
// per row instead of paying one each, and none is acknowledged before its data is committed.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>

#include "feedback-handler/ingest/batch.h"
#include "feedback-handler/store/store.h"

namespace perfhat::handler {

// Tunables of the ingest commit path; the defaults are safe for a small deployment.
struct GroupCommitOptions {
  // After the first batch of a group arrives, wait at most this long for more to join. 0 adds no
  // latency: batches that arrive while a commit runs still share the next commit, so grouping
  // happens exactly when requests overlap.
  std::chrono::microseconds max_batch_delay{0};
  // Batches waiting for the committer; beyond this, submitters block (backpressure on clients).
  size_t max_pending = 256;
  // One transaction takes pending batches until it holds about this many aggregate rows (bounds
  // the memory of a merged batch and the time a commit holds the store).
  size_t max_rows_per_commit = 200000;
};

class GroupCommitter {
 public:
  GroupCommitter(Store& store, GroupCommitOptions options = {});
  // Commits whatever is pending, then stops the committer thread.
  ~GroupCommitter();
  GroupCommitter(const GroupCommitter&) = delete;
  GroupCommitter& operator=(const GroupCommitter&) = delete;

  // Blocks until `batch` is durable; returns the store cursor of the commit that holds it.
  // Throws StoreError if that commit failed (then none of its batches are stored).
  uint64_t commit(Batch batch);

  struct Counters {
    uint64_t commits = 0;  // transactions
    uint64_t batches = 0;  // batches (requests) committed
  };
  Counters counters() const;

 private:
  struct Waiter {
    Batch batch;
    bool done = false;
    uint64_t cursor = 0;
    std::exception_ptr error;
  };
  void run();

  Store& store_;
  const GroupCommitOptions options_;
  mutable std::mutex mu_;
  std::condition_variable work_cv_;  // committer: batches pending or stopping
  std::condition_variable done_cv_;  // submitters: a commit finished / room in the queue
  std::deque<Waiter*> pending_;
  bool stopping_ = false;
  Counters counters_;
  std::thread thread_;
};

}  // namespace perfhat::handler
