#include "feedback-handler/util/parallel.h"

namespace perfhat::handler {
namespace {

// Tells the core this is a spin loop (saves power, yields the pipeline to a sibling thread).
inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace

ChunkTeam::ChunkTeam(size_t threads, std::chrono::microseconds spin)
    // More threads than cores: a spinning thread would hold a core a working one needs.
    : spin_(threads <= std::max(1u, std::thread::hardware_concurrency())
                ? spin
                : std::chrono::microseconds(0)) {
  workers_.reserve(threads > 1 ? threads - 1 : 0);
  try {
    for (size_t t = 1; t < threads; ++t) workers_.emplace_back([this, t] { work(t); });
  } catch (const std::system_error&) {  // out of threads: the ones started share the chunks
  }
}

ChunkTeam::~ChunkTeam() {
  {
    std::lock_guard lock(mu_);
    stop_.store(true, std::memory_order_release);
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
}

template <typename Pred>
bool ChunkTeam::spinUntil(Pred pred) const {
  if (pred()) return true;
  const auto until = std::chrono::steady_clock::now() + spin_;
  for (int i = 1;; ++i) {
    cpuRelax();
    if (pred()) return true;
    if (i % 64 == 0 && std::chrono::steady_clock::now() >= until) return pred();
  }
}

void ChunkTeam::run(size_t chunks, const std::function<void(size_t)>& job) {
  const size_t threads = this->threads();
  if (threads > 1) {
    {
      std::lock_guard lock(mu_);
      job_ = &job;
      chunks_ = chunks;
      pending_.store(workers_.size(), std::memory_order_relaxed);
      generation_.fetch_add(1, std::memory_order_release);  // publishes job_ to spinning workers
    }
    wake_.notify_all();
  }
  for (size_t c = 0; c < chunks; c += threads) job(c);
  if (threads == 1) return;
  auto finished = [this] { return pending_.load(std::memory_order_acquire) == 0; };
  if (!spinUntil(finished)) {
    std::unique_lock lock(mu_);
    done_.wait(lock, finished);
  }
}

void ChunkTeam::work(size_t thread) {
  uint64_t seen = 0;
  auto called = [&] {
    return generation_.load(std::memory_order_acquire) != seen ||
           stop_.load(std::memory_order_acquire);
  };
  for (;;) {
    if (!spinUntil(called)) {
      std::unique_lock lock(mu_);
      wake_.wait(lock, called);
    }
    if (stop_.load(std::memory_order_acquire)) return;
    seen = generation_.load(std::memory_order_acquire);
    const size_t threads = this->threads();
    for (size_t c = thread; c < chunks_; c += threads) (*job_)(c);
    if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      std::lock_guard lock(mu_);  // the caller is waiting, or checks `pending_` before it waits
      done_.notify_one();
    }
  }
}

}  // namespace perfhat::handler
