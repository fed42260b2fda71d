// The engine's clock: TSC ticks (or an injected source) converted to wall time, calibrated
// against the steady clock; and the thread-local random source seeded from it.
#include "engine_internal.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <random>
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

namespace {

bool tsc_is_invariant() {
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

uint64_t steady_ticks() { return steady_now_ns(); }

uint64_t splitmix(uint64_t& x) {
  uint64_t z = (x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

thread_local uint64_t t_seed = 0;

}  // namespace

uint64_t random64() {
  if (t_seed == 0) {
    t_seed = std::random_device{}() ^ (steady_now_ns() << 1) ^ reinterpret_cast<uintptr_t>(&t_seed);
  }
  return splitmix(t_seed);
}

uint64_t steady_ns() noexcept { return steady_now_ns(); }

void set_tick_source(uint64_t (*fn)()) { g_tick_source.store(fn, std::memory_order_relaxed); }

void Engine::calibrate_clock(bool initial) {
  auto src = g_tick_source.load(std::memory_order_relaxed);
  if (src != nullptr && src != &steady_ticks) {
    ns_per_tick_.store(1.0);  // injected clocks tick in nanoseconds
    if (initial) {
      tick0_ = now_ticks();
      unix0_ = unix_now_ns();
    }
    return;
  }
  if (initial) {
    if (!tsc_is_invariant()) g_tick_source.store(&steady_ticks);
    if (g_tick_source.load() == &steady_ticks) {
      tick0_ = now_ticks();
      steady0_ = steady_now_ns();
      unix0_ = unix_now_ns();
      ns_per_tick_.store(1.0);
      return;
    }
    // A short first estimate; the background thread refines it over longer baselines. Each end
    // is a steady-clock read between two tick reads taken close together (a read interrupted
    // or preempted between them is taken again), so 200 us is a baseline good to about 0.05 %:
    // a process that starts with probes on pays 0.2 ms, not the 2 ms this used to wait.
    auto paired = [this](uint64_t& tick, uint64_t& steady) {
      for (int attempt = 0; attempt < 8; ++attempt) {
        const uint64_t a = now_ticks();
        steady = steady_now_ns();
        const uint64_t b = now_ticks();
        tick = a + (b - a) / 2;
        if (b - a < 20'000) return;  // a few microseconds at any TSC rate
      }
    };
    paired(tick0_, steady0_);
    unix0_ = unix_now_ns();
    uint64_t t1 = 0, s1 = 0;
    do {
      paired(t1, s1);
    } while (s1 - steady0_ < 200'000);
    ns_per_tick_.store(static_cast<double>(s1 - steady0_) / static_cast<double>(t1 - tick0_));
    return;
  }
  if (g_tick_source.load() == &steady_ticks) return;
  uint64_t t = now_ticks(), s = steady_now_ns();
  if (t > tick0_ && s > steady0_ + 100'000'000) {
    ns_per_tick_.store(static_cast<double>(s - steady0_) / static_cast<double>(t - tick0_));
  }
}

double Engine::now_s() {
  return static_cast<double>(now_ticks() - tick0_) * ns_per_tick_.load() / 1e9;
}

uint64_t Engine::to_unix_ns(uint64_t tick) {
  double d = (static_cast<double>(tick) - static_cast<double>(tick0_)) * ns_per_tick_.load();
  return unix0_ + static_cast<uint64_t>(std::max(-static_cast<double>(unix0_), d));
}

}  // namespace perfhat::detail
