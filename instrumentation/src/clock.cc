// The engine's clock: TSC ticks (or an injected source) converted to wall time, calibrated
// against the steady clock; and the thread-local random source seeded from it.
#include "engine_internal.h"
#include "tick_baseline.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#if __has_include(<sys/platform/x86.h>)  // glibc 2.33 and later
// A C header whose inline functions return _Bool, which clang's C++ does not know.
#define _Bool bool  // NOLINT(bugprone-reserved-identifier)
#include <sys/platform/x86.h>
#undef _Bool
#define PERFHAT_GLIBC_CPU_FEATURES 1
#endif
#endif

#include <sys/random.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <string>

namespace perfhat::detail {

uint64_t steady_now_ns() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}
uint64_t unix_now_ns() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
}

// CPUID's invariant-TSC bit (leaf 0x80000007, EDX bit 8): Linux reports constant_tsc and
// nonstop_tsc whenever it is set. Reading /proc/cpuinfo costs about 0.1 ms of every process
// that starts with probes on; it is read only when the bit is clear (a kernel may know a TSC
// invariant that a hypervisor's CPUID hides). glibc keeps the CPUID leaves it read at start-up:
// asked there first, since a CPUID instruction in a virtual machine traps to the hypervisor
// (about 30 us for the four of __get_cpuid on this project's VM).
bool cpuid_invariant_tsc() {
#if defined(__x86_64__) || defined(__i386__)
#ifdef PERFHAT_GLIBC_CPU_FEATURES
  return CPU_FEATURE_PRESENT(INVARIANT_TSC);
#else
  unsigned a = 0, b = 0, c = 0, d = 0;
  __cpuid(0x80000000u, a, b, c, d);
  if (a < 0x80000007u) return false;
  __cpuid(0x80000007u, a, b, c, d);
  return (d >> 8) & 1u;
#endif
#else
  return false;
#endif
}

bool cpuinfo_invariant_tsc() {
#if defined(__x86_64__) || defined(__i386__)
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) == 0) {
      return line.find(" constant_tsc") != std::string::npos &&
             line.find(" nonstop_tsc") != std::string::npos;
    }
  }
#endif
  return false;
}

namespace {

bool tsc_is_invariant() { return cpuid_invariant_tsc() || cpuinfo_invariant_tsc(); }

uint64_t steady_ticks() { return steady_now_ns(); }

uint64_t splitmix(uint64_t& x) {
  uint64_t z = (x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

thread_local uint64_t t_seed = 0;

}  // namespace

// A thread's seed from the kernel (getrandom: one system call). std::random_device asks CPUID
// for RDRAND first, which traps to the hypervisor in a virtual machine (about 30 us of every
// process's start). Without entropy (an old kernel) the time and the thread's address differ
// enough between threads and processes for trace ids.
uint64_t random64() {
  if (t_seed == 0) {
    uint64_t entropy = 0;
    if (::getrandom(&entropy, sizeof entropy, GRND_NONBLOCK) != sizeof entropy) entropy = 0;
    t_seed = entropy ^ (steady_now_ns() << 1) ^ reinterpret_cast<uintptr_t>(&t_seed);
  }
  return splitmix(t_seed);
}

uint64_t steady_ns() noexcept { return steady_now_ns(); }

void set_tick_source(uint64_t (*fn)()) { g_tick_source.store(fn, std::memory_order_relaxed); }

namespace {

// A steady-clock read between two tick reads taken close together, the pair's tick its middle
// (a read interrupted or preempted between them is taken again).
void paired_read(uint64_t& tick, uint64_t& steady) {
  for (int attempt = 0; attempt < 8; ++attempt) {
    const uint64_t a = now_ticks();
    steady = steady_now_ns();
    const uint64_t b = now_ticks();
    tick = a + (b - a) / 2;
    if (b - a < 20'000) return;  // a few microseconds at any TSC rate
  }
}

}  // namespace

void Engine::calibrate_clock(bool initial) {
  Lock l(clock_mu_);
  if (initial) rate_steady_ = 0;  // a new baseline: no rate stored from it yet
  auto src = g_tick_source.load(std::memory_order_relaxed);
  if (src != nullptr && src != &steady_ticks) {
    ns_per_tick_.store(1.0);  // injected clocks tick in nanoseconds
    if (initial) {
      tick0_ = now_ticks();
      unix0_ = unix_now_ns();
    }
    clock_settled_.store(true, std::memory_order_release);
    return;
  }
  if (initial) {
    if (!tsc_is_invariant()) g_tick_source.store(&steady_ticks);
    if (g_tick_source.load() == &steady_ticks) {
      tick0_ = now_ticks();
      steady0_ = steady_now_ns();
      unix0_ = unix_now_ns();
      ns_per_tick_.store(1.0);
      clock_settled_.store(true, std::memory_order_release);
      return;
    }
    // A provisional estimate (tick_baseline.h); ns_per_tick() settles it later.
    paired_read(tick0_, steady0_);
    unix0_ = unix_now_ns();
    const TickBaseline base{tick0_, steady0_};
    uint64_t t1 = 0, s1 = 0;
    do {
      paired_read(t1, s1);
    } while (!base.provisional(s1));
    clock_settled_.store(false, std::memory_order_release);  // after tick0_ and steady0_
    ns_per_tick_.store(base.ns_per_tick(t1, s1));
    rate_steady_ = s1;
    return;
  }
  if (g_tick_source.load() == &steady_ticks) return;
  uint64_t t = now_ticks(), s = steady_now_ns();
  if (t > tick0_ && s > steady0_ + 100'000'000 && s > rate_steady_) {
    ns_per_tick_.store(static_cast<double>(s - steady0_) / static_cast<double>(t - tick0_));
    rate_steady_ = s;
    clock_settled_.store(true, std::memory_order_release);
  }
}

void Engine::settle_clock() {
  // Another thread storing a rate meanwhile: this conversion uses the current one.
  if (!clock_mu_.try_lock()) return;
  const TickBaseline base{tick0_, steady0_};
  uint64_t t = 0, s = 0;
  paired_read(t, s);
  // Before the settled baseline, each conversion still gets the longest baseline so far.
  if (!clock_settled_.load(std::memory_order_relaxed) && s > rate_steady_) {
    ns_per_tick_.store(base.ns_per_tick(t, s));
    rate_steady_ = s;
    if (base.settled(s)) clock_settled_.store(true, std::memory_order_release);
  }
  clock_mu_.unlock();
}

double Engine::now_s() { return static_cast<double>(now_ticks() - tick0_) * ns_per_tick() / 1e9; }

uint64_t Engine::to_unix_ns(uint64_t tick) {
  double d = (static_cast<double>(tick) - static_cast<double>(tick0_)) * ns_per_tick();
  return unix0_ + static_cast<uint64_t>(std::max(-static_cast<double>(unix0_), d));
}

}  // namespace perfhat::detail
