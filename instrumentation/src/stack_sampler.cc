#include "stack_sampler.h"

#include "engine.h"

#include <execinfo.h>
#include <signal.h>
#include <time.h>
#include <ucontext.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <mutex>

namespace perfhat::sampling {
namespace {

void handler(int, siginfo_t*, void* uc) {
  const int saved = errno;
  StackSampler::get().on_signal(uc);
  errno = saved;
}

}  // namespace

namespace {
std::atomic<StackSampler*> g_created{nullptr};
}  // namespace

StackSampler& StackSampler::get() {
  static auto* s = [] {
    auto* made = new StackSampler();  // never destroyed: a late signal may still arrive
    g_created.store(made);
    return made;
  }();
  return *s;
}

StackSampler* StackSampler::if_created() { return g_created.load(); }

// The interrupted instruction, from the signal's saved registers.
static const void* interrupted_pc(void* uc) noexcept {
  auto* u = static_cast<ucontext_t*>(uc);
#if defined(__x86_64__)
  return reinterpret_cast<const void*>(u->uc_mcontext.gregs[REG_RIP]);
#elif defined(__aarch64__)
  return reinterpret_cast<const void*>(u->uc_mcontext.pc);
#else
  (void)u;
  return nullptr;
#endif
}

void StackSampler::on_signal(void* uc) noexcept {
  const uint64_t t0 = detail::now_ticks();
  uint64_t pos = head_.load(std::memory_order_relaxed);
  do {
    if (pos - tail_.load(std::memory_order_acquire) >= kRingEntries) {  // the exporter is behind
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
  } while (!head_.compare_exchange_weak(pos, pos + 1, std::memory_order_acq_rel,
                                        std::memory_order_relaxed));
  RawSample& e = ring_[pos & (kRingEntries - 1)];
  void* frames[kMaxFrames + 2];
  int n = backtrace(frames, kMaxFrames + 2);
  // The handler's own frames and the signal trampoline come first: the stack proper starts at
  // the interrupted instruction, which the unwinder reports exactly for a signal frame.
  const void* pc = interrupted_pc(uc);
  int skip = n > 3 ? 3 : 0;
  for (int i = 0; i < n && pc != nullptr; ++i) {
    if (frames[i] == pc) {
      skip = i;
      break;
    }
  }
  e.depth = static_cast<uint32_t>(n - skip);
  for (int i = skip; i < n; ++i) e.pcs[i - skip] = frames[i];
  e.sequence.store(pos + 1, std::memory_order_release);
  taken_.fetch_add(1, std::memory_order_relaxed);
  handler_ticks_.fetch_add(detail::now_ticks() - t0, std::memory_order_relaxed);
}

std::size_t StackSampler::drain(const std::function<void(void* const*, uint32_t)>& sample) {
  std::size_t n = 0;
  uint64_t tail = tail_.load(std::memory_order_relaxed);
  for (;;) {
    RawSample& e = ring_[tail & (kRingEntries - 1)];
    if (e.sequence.load(std::memory_order_acquire) != tail + 1) break;  // not written yet
    sample(e.pcs, e.depth);
    ++tail;
    ++n;
    tail_.store(tail, std::memory_order_release);  // the entry is free for the next lap
  }
  return n;
}

detail::Status StackSampler::set_rate(double hz) {
  detail::Lock l(control_mu_);
  auto fail = [](const char* what) {
    return detail::Status::failure(std::string(what) + ": " + std::strerror(errno));
  };
  if (!(hz > 0)) {
    if (installed_) {  // (a timer_t may be 0: the kernel numbers timers from 0)
      itimerspec off{};
      timer_settime(static_cast<timer_t>(timer_), 0, &off, nullptr);
    }
    hz_.store(0);
    return detail::Status::success();
  }
  if (!installed_) {
    struct sigaction old {};
    if (sigaction(SIGPROF, nullptr, &old) != 0) return fail("sigaction");
    if ((old.sa_flags & SA_SIGINFO) ? old.sa_sigaction != nullptr
                                    : (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN)) {
      return detail::Status::failure("SIGPROF already has a handler (a profiler?)");
    }
    void* warm[4];
    (void)backtrace(warm, 4);  // loads the unwinder outside the signal handler
    struct sigaction sa {};
    sa.sa_sigaction = &handler;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGPROF, &sa, nullptr) != 0) return fail("sigaction");
    sigevent ev{};
    ev.sigev_notify = SIGEV_SIGNAL;
    ev.sigev_signo = SIGPROF;
    timer_t t;
    if (timer_create(CLOCK_PROCESS_CPUTIME_ID, &ev, &t) != 0) return fail("timer_create");
    timer_ = t;
    installed_ = true;
  }
  const double period = 1.0 / hz;
  itimerspec its{};
  its.it_interval.tv_sec = static_cast<time_t>(period);
  its.it_interval.tv_nsec = static_cast<long>((period - std::floor(period)) * 1e9);
  if (its.it_interval.tv_sec == 0 && its.it_interval.tv_nsec < 1000) its.it_interval.tv_nsec = 1000;
  its.it_value = its.it_interval;
  if (timer_settime(static_cast<timer_t>(timer_), 0, &its, nullptr) != 0)
    return fail("timer_settime");
  hz_.store(hz);
  return detail::Status::success();
}

void StackSampler::stop() { set_rate(0); }

}  // namespace perfhat::sampling
