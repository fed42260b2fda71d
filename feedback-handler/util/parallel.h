// Splitting one large request over the machine's cores (a 10,000-key batchGet is read and
// written in chunks on parallel threads). Only requests large enough to give each thread
// ≥ min_per_chunk items are split. forEachChunk starts threads per call; a ChunkTeam starts them
// once for all the steps of one request (see there: on a VM, starting or waking a thread on an
// idle core costs milliseconds, not the tens of µs of bare metal).
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace perfhat::handler {

// Threads a handler uses for one request: one per core, at most 4 (configured 0), or as set.
inline size_t requestThreads(int configured) {
  if (configured > 0) return static_cast<size_t>(configured);
  return std::min<size_t>(std::max(1u, std::thread::hardware_concurrency()), 4);
}

// How many chunks `n` items go in: each at least `min_per_chunk`, at most `threads`.
inline size_t chunkCount(size_t n, size_t min_per_chunk, size_t threads) {
  return std::max<size_t>(1, std::min(threads, n / std::max<size_t>(1, min_per_chunk)));
}

// Calls fn(chunk, begin, end) for `chunks` contiguous ranges covering [0, n): chunk 0 on the
// calling thread, the others each on a thread of its own (on the calling thread, after chunk 0,
// when no thread can be started). Returns when all have finished; rethrows the first chunk's
// exception, if any.
template <typename Fn>
void forEachChunk(size_t n, size_t chunks, Fn&& fn) {
  chunks = std::max<size_t>(1, chunks);
  std::vector<std::exception_ptr> errors(chunks);
  auto run = [&](size_t c) {
    try {
      fn(c, n * c / chunks, n * (c + 1) / chunks);
    } catch (...) {
      errors[c] = std::current_exception();
    }
  };
  std::vector<std::thread> threads;
  threads.reserve(chunks - 1);
  size_t started = 1;
  try {
    for (; started < chunks; ++started) threads.emplace_back(run, started);
  } catch (const std::system_error&) {  // out of threads: the rest run here
  }
  run(0);
  for (size_t c = started; c < chunks; ++c) run(c);
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

// The threads of one large request, started once and reused by each of its steps (a batchGet
// resolves keys, reads aggregates and writes JSON: three steps ~1 ms apart). On this project's
// 2-vCPU VM a thread start, or the wake-up of a thread parked on an idle core, took 0.9 / 2.1 /
// 4.8 ms (p10 / p50 / p90): each step paid that before its second chunk began. A team pays it
// once, and between steps its workers spin for up to `spin` before they park, so a step that
// follows within that time starts on all threads at once. Teams are for requests large enough to
// be split; the spinning is bounded and ends when the team is destroyed.
class ChunkTeam {
 public:
  static constexpr std::chrono::microseconds kDefaultSpin{5000};

  // `threads` in all, the caller included: threads - 1 workers start now (fewer when the system
  // cannot start them; their chunks then run on the others). A team of more threads than cores
  // does not spin.
  explicit ChunkTeam(size_t threads, std::chrono::microseconds spin = kDefaultSpin);
  ~ChunkTeam();
  ChunkTeam(const ChunkTeam&) = delete;
  ChunkTeam& operator=(const ChunkTeam&) = delete;

  size_t threads() const { return workers_.size() + 1; }

  // As the free forEachChunk: fn(chunk, begin, end) over `chunks` contiguous ranges of [0, n);
  // chunk c runs on thread c % threads() (thread 0 is the caller). Returns when all have
  // finished; rethrows the first chunk's exception, if any. One call at a time.
  template <typename Fn>
  void forEachChunk(size_t n, size_t chunks, Fn&& fn) {
    chunks = std::max<size_t>(1, chunks);
    std::vector<std::exception_ptr> errors(chunks);
    const std::function<void(size_t)> job = [&](size_t c) {
      try {
        fn(c, n * c / chunks, n * (c + 1) / chunks);
      } catch (...) {
        errors[c] = std::current_exception();
      }
    };
    run(chunks, job);
    for (const std::exception_ptr& e : errors) {
      if (e) std::rethrow_exception(e);
    }
  }

 private:
  void run(size_t chunks, const std::function<void(size_t)>& job);
  void work(size_t thread);
  // Spins until pred() holds or `spin_` has passed; returns pred().
  template <typename Pred>
  bool spinUntil(Pred pred) const;

  // No thread-safety annotations here, by design: the step's state is handed over through
  // atomics, not under a lock. run() writes job_ and chunks_ (under mu_, but that is not what
  // protects them) and then bumps generation_ with release order; a worker reads them without
  // mu_ once it saw the new generation_ with acquire order, which happens while it spins and
  // never touches mu_. The workers' pending_ decrement (acq_rel) hands the step back.
  // GUARDED_BY(mu_) on job_/chunks_ would be false (the spinning reads are correct and
  // unlocked), so mu_ guards no data: it only orders sleeping against waking (a worker checks
  // generation_/stop_ under mu_ before it waits; run() and ~ChunkTeam change them under mu_
  // before they notify), so no wake-up is lost. ThreadSanitizer checks this hand-over instead
  // (handler_util_test in scripts/test.sh's tsan step).
  const std::chrono::microseconds spin_;
  std::mutex mu_;
  std::condition_variable wake_, done_;
  const std::function<void(size_t)>* job_ = nullptr;  // the current step (under mu_ or a new
  size_t chunks_ = 0;                                 // generation_, which publishes it)
  std::atomic<uint64_t> generation_{0};               // steps started
  std::atomic<size_t> pending_{0};                    // workers still in the current step
  std::atomic<bool> stop_{false};
  std::vector<std::thread> workers_;
};

// Runs on `team` when there is one, else as the free forEachChunk.
template <typename Fn>
void forEachChunk(ChunkTeam* team, size_t n, size_t chunks, Fn&& fn) {
  if (team) return team->forEachChunk(n, chunks, std::forward<Fn>(fn));
  forEachChunk(n, chunks, std::forward<Fn>(fn));
}

}  // namespace perfhat::handler
