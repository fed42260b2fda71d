#include "server/server/scheduler.h"

#include <pthread.h>

#include <algorithm>

#include "server/server/edit_trace.h"

namespace perfhat::server {

namespace {

class SteadyClock final : public SchedulerClock {
 public:
  TimePoint now() const override { return std::chrono::steady_clock::now(); }
  void waitUntil(CondVar& cv, MutexLock& lock, TimePoint deadline) override {
    if (deadline == TimePoint::max()) {
      cv.wait(lock);
    } else {
      cv.waitUntil(lock, deadline);
    }
  }
};

}  // namespace

SchedulerClock& steadySchedulerClock() {
  static SteadyClock clock;
  return clock;
}

std::chrono::microseconds DebouncePolicy::delay(double last_build_ms) const {
  double ms =
      std::clamp(last_build_ms * ratio, static_cast<double>(min_ms), static_cast<double>(max_ms));
  return std::chrono::microseconds(static_cast<int64_t>(ms * 1000));
}

Scheduler::Scheduler(Work work, SchedulerClock& clock) : work_(std::move(work)), clock_(clock) {}

Scheduler::~Scheduler() {
  requestStop();
  join();
}

void Scheduler::start(size_t stack_bytes, const char* name) {
  worker_ = LargeStackThread(stack_bytes, [this, name] {
    pthread_setname_np(pthread_self(), name);
    loop();
  });
}

std::vector<WaitingRead> Scheduler::requestStop() {
  std::vector<WaitingRead> orphans;
  {
    MutexLock lock(mu_);
    if (stopping_) return orphans;
    stopping_ = true;
    orphans.swap(waiting_);
  }
  cv_.notifyAll();
  return orphans;
}

void Scheduler::join() {
  if (worker_.joinable()) worker_.join();
}

void Scheduler::wake() {
  MutexLock lock(mu_);  // a worker between reading the clock and waiting sees the wake
  cv_.notifyAll();
}

// ---- Documents ----

void Scheduler::open(std::shared_ptr<const Document> doc) {
  {
    MutexLock lock(mu_);
    DocState& st = docs_[doc->uri()];
    st = DocState{};
    st.doc = std::move(doc);
    st.dirty = true;
    st.due = clock_.now();  // first build: no debounce
    st.changed = st.due;
  }
  cv_.notifyAll();
}

std::shared_ptr<const Document> Scheduler::latest(const std::string& uri) const {
  MutexLock lock(mu_);
  auto it = docs_.find(uri);
  return it == docs_.end() ? nullptr : it->second.doc;
}

bool Scheduler::edit(std::shared_ptr<const Document> doc) {
  {
    MutexLock lock(mu_);
    auto it = docs_.find(doc->uri());
    if (it == docs_.end()) return false;
    DocState& st = it->second;
    const bool settled = !st.dirty && st.built_doc && st.built_doc->version() == st.doc->version();
    st.doc = std::move(doc);
    st.dirty = true;
    st.due = st.changed = clock_.now();
    if (!settled) st.due += debounce_.delay(last_build_ms_);
  }
  cv_.notifyAll();
  return true;
}

std::optional<std::vector<WaitingRead>> Scheduler::close(const std::string& uri) {
  std::vector<WaitingRead> orphans;
  {
    MutexLock lock(mu_);
    auto it = docs_.find(uri);
    if (it == docs_.end()) return std::nullopt;
    closed_paths_.push_back(it->second.doc->path());
    docs_.erase(it);
    orphans = takeReads(uri);
  }
  cv_.notifyAll();
  return orphans;
}

// ---- Reads ----

Scheduler::Current Scheduler::readOrQueue(WaitingRead read) {
  MutexLock lock(mu_);
  auto it = docs_.find(read.uri);
  if (it == docs_.end()) return {};
  const DocState& st = it->second;
  if (st.last.snapshot && st.built_doc && st.built_doc->version() == st.doc->version() &&
      !st.dirty) {
    return {ReadState::Now, st.last.snapshot, st.built_doc};
  }
  waiting_.push_back(std::move(read));
  return {ReadState::Queued, nullptr, nullptr};
}

std::optional<WaitingRead> Scheduler::cancel(const nlohmann::json& id) {
  MutexLock lock(mu_);
  auto it = std::find_if(waiting_.begin(), waiting_.end(),
                         [&](const WaitingRead& r) { return r.id == id; });
  if (it == waiting_.end()) return std::nullopt;
  WaitingRead read = std::move(*it);
  waiting_.erase(it);
  return read;
}

std::shared_ptr<const features::DynamicView> Scheduler::dynamicOf(const std::string& uri) const {
  MutexLock lock(mu_);
  auto it = docs_.find(uri);
  return it == docs_.end() ? nullptr : it->second.last.dynamic;
}

std::vector<analysis::SnapshotPtr> Scheduler::snapshots() const {
  MutexLock lock(mu_);
  std::vector<analysis::SnapshotPtr> out;
  for (const auto& [uri, st] : docs_) out.push_back(st.last.snapshot);
  return out;
}

std::vector<WaitingRead> Scheduler::takeReads(const std::string& uri) {
  auto keep = std::stable_partition(waiting_.begin(), waiting_.end(),
                                    [&](const WaitingRead& r) { return r.uri != uri; });
  std::vector<WaitingRead> taken(std::make_move_iterator(keep),
                                 std::make_move_iterator(waiting_.end()));
  waiting_.erase(keep, waiting_.end());
  return taken;
}

// ---- What makes work ----

void Scheduler::post(std::function<void()> task) {
  {
    MutexLock lock(mu_);
    tasks_.push_back(std::move(task));
  }
  cv_.notifyAll();
}

void Scheduler::markAllDirty(bool refresh_after) {
  {
    MutexLock lock(mu_);
    for (auto& [uri, st] : docs_) markDirtyNow(st);
    if (refresh_after) refresh_after_build_ = true;
  }
  cv_.notifyAll();
}

size_t Scheduler::markDirtyWhere(
    const std::function<bool(const std::string& uri, const Build& last)>& uses) {
  size_t marked = 0;
  {
    MutexLock lock(mu_);
    for (auto& [uri, st] : docs_) {
      if (!uses(uri, st.last)) continue;
      markDirtyNow(st);
      ++marked;
    }
    if (marked) refresh_after_build_ = true;
  }
  if (marked) cv_.notifyAll();
  return marked;
}

void Scheduler::markDirtyNow(DocState& st) {
  const TimePoint now = clock_.now();
  // A document already waiting keeps the time it began to wait (its edit's).
  if (!st.dirty) st.changed = now;
  st.dirty = true;
  st.due = now;
}

void Scheduler::reconfigureAnalyzer() {
  {
    MutexLock lock(mu_);
    configure_due_ = true;
  }
  cv_.notifyAll();
}

void Scheduler::setDebounce(DebouncePolicy policy) {
  MutexLock lock(mu_);
  debounce_ = policy;
}

void Scheduler::setPolling(bool enabled, std::chrono::seconds interval, bool restart_timer) {
  {
    MutexLock lock(mu_);
    poll_enabled_ = enabled;
    poll_interval_ = interval;
    if (restart_timer) next_poll_ = clock_.now() + std::max(interval, std::chrono::seconds(1));
  }
  cv_.notifyAll();
}

double Scheduler::lastQueuedMs() const {
  MutexLock lock(mu_);
  return last_queued_ms_;
}

bool Scheduler::waitIdle(std::chrono::milliseconds timeout) {
  MutexLock lock(mu_);
  const TimePoint deadline = clock_.now() + timeout;
  for (;;) {
    if (!busy_ && tasks_.empty() && !anyDirty()) return true;
    if (clock_.now() >= deadline) return false;
    clock_.waitUntil(cv_, lock, deadline);
  }
}

// ---- The worker ----

bool Scheduler::anyDirty() const {
  return std::any_of(docs_.begin(), docs_.end(), [](const auto& d) { return d.second.dirty; });
}

bool Scheduler::polling() const {
  return poll_enabled_ && poll_interval_.count() > 0 && !docs_.empty();
}

void Scheduler::loop() {
  MutexLock lock(mu_);
  while (!stopping_) {
    Job job = nextJob();
    if (!job.run) {
      // Nothing due: sleep until the next due document or poll, or new work.
      TimePoint wake = TimePoint::max();
      for (const auto& [uri, st] : docs_)
        if (st.dirty) wake = std::min(wake, st.due);
      if (polling()) wake = std::min(wake, next_poll_);
      cv_.notifyAll();  // waitIdle() observers
      clock_.waitUntil(cv_, lock, wake);
      continue;
    }
    busy_ = true;
    lock.unlock();
    job.run();
    lock.lock();
    busy_ = false;
    if (job.is_build && !anyDirty() && refresh_after_build_) {
      refresh_after_build_ = false;
      lock.unlock();
      work_.refresh();
      lock.lock();
    }
    if (job.notify_after) cv_.notifyAll();
  }
}

Scheduler::Job Scheduler::nextJob() {
  if (configure_due_) {
    configure_due_ = false;
    return {work_.configure};
  }
  if (!closed_paths_.empty()) {
    std::vector<std::string> closed;
    closed.swap(closed_paths_);
    return {[this, closed = std::move(closed)] {
      for (const auto& p : closed) work_.close(p);
    }};
  }
  if (!tasks_.empty()) {
    Job job{std::move(tasks_.front()), false, true};
    tasks_.pop_front();
    return job;
  }
  // The dirty document due first.
  const std::string* uri = nullptr;
  TimePoint due = TimePoint::max();
  for (const auto& [u, st] : docs_) {
    if (st.dirty && st.due < due) {
      due = st.due;
      uri = &u;
    }
  }
  const TimePoint now = clock_.now();
  if (uri && due <= now) {
    DocState& st = docs_[*uri];
    st.dirty = false;
    return {[this, uri = *uri, doc = st.doc, changed = st.changed] { build(uri, doc, changed); },
            true, true};
  }
  if (polling() && next_poll_ <= now) {
    next_poll_ = now + poll_interval_;
    return {work_.poll};
  }
  return {};
}

void Scheduler::build(const std::string& uri, const std::shared_ptr<const Document>& doc,
                      TimePoint changed) {
  const double queued_ms =
      std::chrono::duration<double, std::milli>(clock_.now() - changed).count();
  EditTrace::begin(queued_ms);
  Build build = work_.build(*doc);
  std::vector<WaitingRead> ready;
  analysis::SnapshotPtr before;
  {
    MutexLock lock(mu_);
    last_build_ms_ = build.ms;
    last_queued_ms_ = queued_ms;
    auto it = docs_.find(uri);
    if (it == docs_.end()) {
      EditTrace::end();
      return;  // closed meanwhile
    }
    DocState& st = it->second;
    before = st.last.snapshot;
    st.last = build;
    st.built_doc = doc;
    // Reads waiting for this document run once the snapshot matches the latest text; if another
    // edit arrived during the build they wait for the next one (at most one debounce away), so
    // their positions always refer to the text they were computed on.
    if (!st.dirty) ready = takeReads(uri);
  }
  EditTrace::mark("store");
  for (auto& r : ready) r.run(*build.snapshot, *doc);
  EditTrace::mark("reads");
  work_.built(uri, build, *doc, before);
  before.reset();  // the previous snapshot, unless a reader still holds it
  EditTrace::mark("drop-previous");
  const std::string stages = EditTrace::end();
  if (!stages.empty() && work_.traced) work_.traced(uri, doc->version(), stages);
}

}  // namespace perfhat::server
