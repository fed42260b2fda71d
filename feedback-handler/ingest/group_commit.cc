#include "feedback-handler/ingest/group_commit.h"

#include <algorithm>
#include <cstdio>
#include <vector>

namespace perfhat::handler {

using Clock = std::chrono::steady_clock;

GroupCommitter::GroupCommitter(Store& store, GroupCommitOptions options, IntakeLog* log)
    : store_(store),
      options_(options),
      log_(log),
      write_behind_(log != nullptr && options.checkpoint_interval.count() > 0),
      thread_([this] { run(); }) {}

GroupCommitter::~GroupCommitter() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
  }
  work_cv_.notifyAll();
  done_cv_.notifyAll();  // queued submitters and readers stop waiting
  thread_.join();
}

uint64_t GroupCommitter::commit(Batch batch) {
  return commit([&batch](Batch& into) { into.absorb(std::move(batch)); });
}

uint64_t GroupCommitter::commit(Fill fill, std::string_view body, int format) {
  Waiter w{std::move(fill), body, format};
  MutexLock lock(mu_);
  while (pending_.size() >= options_.max_pending && !stopping_) done_cv_.wait(lock);
  if (stopping_) throw StoreError("store: handler is shutting down");
  if (checkpoint_error_ && counters_.dirty_rows >= options_.max_dirty_rows) {
    // Memory holds what the failing checkpoints could not write; do not let it grow unbounded.
    throw StoreError("store: checkpoints are failing and " + std::to_string(counters_.dirty_rows) +
                     " rows are waiting; not accepting more");
  }
  pending_.push_back(&w);
  work_cv_.notifyOne();
  while (!w.done) done_cv_.wait(lock);
  if (w.error) std::rethrow_exception(w.error);
  return w.id;
}

bool GroupCommitter::flush() {
  if (!write_behind_) return true;
  MutexLock lock(mu_);
  const uint64_t target = appended_;  // every group acknowledged so far
  if (checkpointed_ >= target) return true;
  if (checkpoint_error_) return false;  // failing now: do not wait for the next retry
  ++flush_waiters_;
  work_cv_.notifyOne();
  while (checkpointed_ < target && !checkpoint_error_ && !stopping_) done_cv_.wait(lock);
  --flush_waiters_;
  return checkpointed_ >= target;
}

void GroupCommitter::setOnCheckpoint(std::function<void()> hook) {
  MutexLock lock(mu_);
  on_checkpoint_ = std::move(hook);
}

GroupCommitter::Counters GroupCommitter::counters() const {
  MutexLock lock(mu_);
  return counters_;
}

bool GroupCommitter::checkpointDue(Clock::time_point now) const {
  if (!write_behind_ || dirty_.empty()) return false;
  if (stopping_) return true;
  // After a failure, retry once per interval whatever asks for it (no busy retry loop).
  if (checkpoint_error_) return now - last_checkpoint_ >= options_.checkpoint_interval;
  return now - dirty_since_ >= options_.checkpoint_interval ||
         dirty_.aggregates.size() >= options_.max_dirty_rows ||
         (flush_waiters_ > 0 && now - last_checkpoint_ >= options_.min_checkpoint_gap);
}

void GroupCommitter::run() {
  MutexLock lock(mu_);
  for (;;) {
    // Sleep until requests arrive, a checkpoint falls due, or we stop.
    while (pending_.empty() && !stopping_ && !checkpointDue(Clock::now())) {
      if (!write_behind_ || dirty_.empty()) {
        work_cv_.wait(lock);
        continue;
      }
      Clock::time_point due = dirty_since_ + options_.checkpoint_interval;
      if (checkpoint_error_) {
        due = last_checkpoint_ + options_.checkpoint_interval;
      } else if (flush_waiters_ > 0) {
        due = std::min(due, last_checkpoint_ + options_.min_checkpoint_gap);
      }
      work_cv_.waitUntil(lock, due);
    }
    if (!pending_.empty()) {
      if (options_.max_batch_delay.count() > 0 && !stopping_) {
        const Clock::time_point until = Clock::now() + options_.max_batch_delay;
        while (pending_.size() < options_.max_pending && !stopping_ &&
               work_cv_.waitUntil(lock, until) == std::cv_status::no_timeout) {
        }
      }
      // Take a group; write outside the lock so submitters keep queueing meanwhile.
      std::vector<Waiter*> group(pending_.begin(), pending_.end());
      pending_.clear();
      done_cv_.notifyAll();  // room in the queue
      if (write_behind_) {
        // Batches without a body (none come from HTTP) cannot be replayed: write them through.
        auto first_through = std::stable_partition(
            group.begin(), group.end(), [](const Waiter* w) { return !w->body.empty(); });
        std::vector<Waiter*> through(first_through, group.end());
        group.erase(first_through, group.end());
        if (!group.empty()) appendToIntake(group);
        if (!through.empty()) writeThrough(through);
      } else {
        writeThrough(group);
      }
    } else if (stopping_ && !checkpointDue(Clock::now())) {
      return;  // drained (a failed final checkpoint leaves its requests in the intake log)
    }
    if (checkpointDue(Clock::now())) checkpoint();
    if (stopping_ && pending_.empty() && (dirty_.empty() || checkpoint_error_)) return;
  }
}

void GroupCommitter::writeThrough(std::vector<Waiter*>& group) {
  mu_.unlock();
  uint64_t cursor = 0;
  std::exception_ptr error;
  try {
    Batch merged;
    fillAll(group, merged);
    // Requests without an identifiable span leave nothing to store (and no change to announce).
    if (!merged.empty() || !merged.meta.empty()) cursor = store_.write(merged);
  } catch (...) {
    error = std::current_exception();
  }
  mu_.lock();
  if (!error && cursor != 0) runHook();  // before the waiters return
  for (Waiter* w : group) {
    w->done = true;
    w->id = cursor;
    if (!w->error) w->error = error;
  }
  ++counters_.commits;
  counters_.batches += group.size();
  done_cv_.notifyAll();
}

void GroupCommitter::runHook() {
  if (!on_checkpoint_) return;
  std::function<void()> hook = on_checkpoint_;
  mu_.unlock();  // the hook takes its own locks (e.g. the change notifier's)
  hook();
  mu_.lock();
}

void GroupCommitter::appendToIntake(std::vector<Waiter*>& group) {
  mu_.unlock();
  int64_t last_id = 0;
  std::exception_ptr error;
  try {
    std::vector<IntakeBody> bodies;
    bodies.reserve(group.size());
    for (const Waiter* w : group) bodies.push_back({w->format, w->body});
    last_id = log_->append(bodies);
    // Durable: from here on the data is the dirty batch's (and the log's, until a checkpoint).
    const bool was_empty = dirty_.empty();
    fillAll(group, dirty_);
    dirty_.meta[kIntakeUpto] = last_id;
    if (was_empty) dirty_since_ = Clock::now();
  } catch (...) {
    error = std::current_exception();
  }
  mu_.lock();
  int64_t id = last_id - static_cast<int64_t>(group.size());
  for (Waiter* w : group) {
    w->done = true;
    w->id = static_cast<uint64_t>(++id);
    if (!w->error) w->error = error;
  }
  ++counters_.commits;
  if (!error) {
    ++appended_;
    counters_.batches += group.size();
    counters_.dirty_requests += group.size();
    counters_.dirty_rows = dirty_.aggregates.size();
    // Requests with no identifiable span add nothing: with nothing dirty no checkpoint would
    // ever come, so readers must not wait for one (their log records replay to nothing).
    if (dirty_.empty()) {
      checkpointed_ = appended_;
      counters_.dirty_requests = 0;
    }
  }
  done_cv_.notifyAll();
}

void GroupCommitter::fillAll(std::vector<Waiter*>& group, Batch& into) {
  // Arrival order matters for last-writer-wins fields (file, line); sketches merge exactly.
  for (Waiter* w : group) {
    try {
      w->fill(into);
    } catch (...) {
      w->error = std::current_exception();  // e.g. bad_alloc; the others still commit
    }
  }
}

void GroupCommitter::checkpoint() {
  const uint64_t covers = appended_;
  mu_.unlock();
  std::exception_ptr error;
  try {
    store_.write(dirty_);
  } catch (...) {
    error = std::current_exception();
  }
  if (!error) {
    dirty_ = Batch();
    try {
      log_->clear();  // all of it is in the aggregates
    } catch (const StoreError& e) {
      // Harmless for correctness: the records left are at or below intake_upto, never replayed.
      std::fprintf(stderr, "perfhat-handler: %s\n", e.what());
    }
  }
  mu_.lock();
  if (!error) runHook();  // before flush() returns to readers
  last_checkpoint_ = Clock::now();
  checkpoint_error_ = error;
  if (error) {
    // The data stays in dirty_ and in the intake log; retried after another interval.
    ++counters_.checkpoint_failures;
  } else {
    checkpointed_ = covers;
    ++counters_.checkpoints;
    counters_.dirty_rows = 0;
    counters_.dirty_requests = 0;
  }
  done_cv_.notifyAll();
}

}  // namespace perfhat::handler
