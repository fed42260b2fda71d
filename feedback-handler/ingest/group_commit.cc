#include "feedback-handler/ingest/group_commit.h"

#include <vector>

namespace perfhat::handler {

GroupCommitter::GroupCommitter(Store& store, GroupCommitOptions options)
    : store_(store), options_(options), thread_([this] { run(); }) {}

GroupCommitter::~GroupCommitter() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  work_cv_.notify_all();
  thread_.join();
}

uint64_t GroupCommitter::commit(Batch batch) {
  Waiter w{std::move(batch)};
  std::unique_lock lock(mu_);
  done_cv_.wait(lock, [&] { return pending_.size() < options_.max_pending || stopping_; });
  if (stopping_) throw StoreError("store: handler is shutting down");
  pending_.push_back(&w);
  work_cv_.notify_one();
  done_cv_.wait(lock, [&] { return w.done; });
  if (w.error) std::rethrow_exception(w.error);
  return w.cursor;
}

GroupCommitter::Counters GroupCommitter::counters() const {
  std::lock_guard lock(mu_);
  return counters_;
}

void GroupCommitter::run() {
  std::unique_lock lock(mu_);
  for (;;) {
    work_cv_.wait(lock, [&] { return !pending_.empty() || stopping_; });
    if (pending_.empty()) return;  // stopping and drained
    if (options_.max_batch_delay.count() > 0 && !stopping_) {
      work_cv_.wait_for(lock, options_.max_batch_delay,
                        [&] { return pending_.size() >= options_.max_pending || stopping_; });
    }
    // Take a group; merge outside the lock so submitters keep queueing meanwhile.
    std::vector<Waiter*> group;
    size_t rows = 0;
    while (!pending_.empty() && (group.empty() || rows < options_.max_rows_per_commit)) {
      group.push_back(pending_.front());
      rows += pending_.front()->batch.aggregates.size();
      pending_.pop_front();
    }
    done_cv_.notify_all();  // room in the queue
    lock.unlock();

    uint64_t cursor = 0;
    std::exception_ptr error;
    try {
      // Arrival order matters for last-writer-wins fields (file, line); sketches merge exactly.
      Batch merged = std::move(group.front()->batch);
      for (size_t i = 1; i < group.size(); ++i) merged.absorb(std::move(group[i]->batch));
      cursor = store_.write(merged);
    } catch (...) {
      error = std::current_exception();
    }

    lock.lock();
    for (Waiter* w : group) {
      w->done = true;
      w->cursor = cursor;
      w->error = error;
    }
    ++counters_.commits;
    counters_.batches += group.size();
    done_cv_.notify_all();
  }
}

}  // namespace perfhat::handler
