// A periodic stack sampler: a POSIX timer on the process CPU clock sends SIGPROF; the handler
// (async-signal-safe: no allocation, no lock) unwinds the interrupted thread's stack into raw PCs
// and writes them into a fixed lock-free ring. The exporter thread drains the ring and symbolises
// the PCs off the hot path (symbolize.h), caching each address.
//
// The unwinder is glibc's backtrace(), called once at start so libgcc's unwinder is loaded before
// the first signal (its lazy load is the one part that is not async-signal-safe). A signal that
// finds the ring full is counted as dropped.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>

#include "status.h"
#include "thread_annotations.h"

namespace perfhat::sampling {

inline constexpr int kMaxFrames = 48;
inline constexpr std::size_t kRingEntries = 4096;  // power of two

struct RawSample {
  std::atomic<uint64_t> sequence{0};  // = ring position + 1 once the entry is complete
  uint32_t depth = 0;
  void* pcs[kMaxFrames];
};

class StackSampler {
 public:
  static StackSampler& get();
  // The sampler if get() ever made it, else nullptr (stopping one never made is a no-op).
  static StackSampler* if_created();
  // Starts (or re-times) sampling at `hz` samples per CPU-second of the process; 0 stops it.
  // Fails (with the reason) when the timer or the signal handler cannot be installed (another
  // SIGPROF handler, e.g. gprof, is left alone).
  detail::Status set_rate(double hz) PERFHAT_EXCLUDES(control_mu_);
  double rate() const { return hz_.load(); }
  void stop() PERFHAT_EXCLUDES(control_mu_);

  // Drains the ring on the caller's (exporter) thread. `sample` is called for each sample with
  // its frames, leaf first; the caller symbolises them (symbolize).
  std::size_t drain(const std::function<void(void* const* pcs, uint32_t depth)>& sample);

  uint64_t taken() const { return taken_.load(); }
  // Ticks (detail::now_ticks) spent inside the signal handler so far, over every thread: what the
  // samples cost the application threads, measured where it is paid.
  uint64_t handler_ticks() const { return handler_ticks_.load(); }
  uint64_t dropped() const { return dropped_.load(); }

  // The signal handler's body (public for the handler trampoline).
  void on_signal(void* ucontext) noexcept;

 private:
  StackSampler() = default;
  RawSample ring_[kRingEntries];
  std::atomic<uint64_t> head_{0};
  std::atomic<uint64_t> tail_{0};  // written by the draining (exporter) thread only
  std::atomic<uint64_t> taken_{0}, dropped_{0}, handler_ticks_{0};
  std::atomic<double> hz_{0};
  detail::Mutex control_mu_;  // set_rate / stop
  bool installed_ PERFHAT_GUARDED_BY(control_mu_) = false;
  void* timer_ PERFHAT_GUARDED_BY(control_mu_) = nullptr;  // timer_t
};

}  // namespace perfhat::sampling
