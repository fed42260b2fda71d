// The stack sampler on a real timer signal: a CPU-bound function shows up, symbolised, in most
// samples; stopping it stops the samples.
#include "stack_sampler.h"

#include <gtest/gtest.h>
#include <time.h>

#include <map>
#include <string>

#include "symbolize.h"

namespace samplertest {
// Kept out of line and busy so the timer finds it on the stack.
[[gnu::noinline]] double spin_for_cpu(double seconds) {
  timespec t0{}, t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
  volatile double x = 1;
  for (;;) {
    for (int i = 0; i < 10000; ++i) x = x * 1.0000001 + 1e-9;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    if ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) * 1e-9 >= seconds) break;
  }
  return x;
}
}  // namespace samplertest

namespace perfhat::sampling {
namespace {

TEST(StackSampler, TimerSamplesFindTheBusyFunction) {
  StackSampler& s = StackSampler::get();
  // The sampler is the process's: samples and counts of earlier tests (--gtest_repeat) go first.
  s.drain([](void* const*, uint32_t) {});
  const uint64_t taken_before = s.taken();
  const detail::Status started = s.set_rate(500);
  ASSERT_TRUE(started) << started.error;
  // 0.3 CPU-s at 500 Hz is ~150 samples, but the kernel checks CPU timers on its ticks and a
  // loaded machine gives this thread short slices: spin on (up to 3 CPU-s) until 40 are taken.
  samplertest::spin_for_cpu(0.3);
  for (int i = 0; i < 27 && s.taken() - taken_before < 40; ++i) samplertest::spin_for_cpu(0.1);
  ASSERT_TRUE(s.set_rate(0));
  std::map<std::string, int> inclusive;
  std::size_t samples = s.drain([&](void* const* pcs, uint32_t depth) {
    std::map<std::string, bool> seen;
    for (uint32_t i = 0; i < depth; ++i) {
      const void* pc = static_cast<const char*>(pcs[i]) - (i ? 1 : 0);
      std::string name = symbolize::resolve(pc).demangled;
      if (!seen[name]) ++inclusive[name];
      seen[name] = true;
    }
  });
  ASSERT_GE(samples, 20u);
  int spin = 0;
  for (const auto& [name, n] : inclusive)
    if (name.find("samplertest::spin_for_cpu") != std::string::npos) spin = n;
  EXPECT_GE(spin, static_cast<int>(samples * 8 / 10)) << "of " << samples;
  // Stopped: no more samples.
  const uint64_t taken = s.taken();
  samplertest::spin_for_cpu(0.05);
  EXPECT_EQ(s.taken(), taken);
  EXPECT_EQ(s.drain([](void* const*, uint32_t) {}), 0u) << taken << " " << samples;
  EXPECT_EQ(s.dropped(), 0u);
}

}  // namespace
}  // namespace perfhat::sampling
