// A small call-heavy program for `perfhat-plan calibrate`'s test and bench: 40 probed functions
// (calibrate_app::f0(unsigned long) … f39), called in turn N times (argv[1], default 2,000,000).
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "perfhat/perfhat.hpp"

namespace calibrate_app {
#define CALIBRATE_APP_FN(i)                               \
  [[gnu::noinline]] std::uint64_t f##i(std::uint64_t x) { \
    PERFHAT_FUNCTION();                                   \
    asm volatile("" : "+r"(x));                           \
    return x * 31 + i;                                    \
  }
// clang-format off
CALIBRATE_APP_FN(0) CALIBRATE_APP_FN(1) CALIBRATE_APP_FN(2) CALIBRATE_APP_FN(3)
CALIBRATE_APP_FN(4) CALIBRATE_APP_FN(5) CALIBRATE_APP_FN(6) CALIBRATE_APP_FN(7)
CALIBRATE_APP_FN(8) CALIBRATE_APP_FN(9) CALIBRATE_APP_FN(10) CALIBRATE_APP_FN(11)
CALIBRATE_APP_FN(12) CALIBRATE_APP_FN(13) CALIBRATE_APP_FN(14) CALIBRATE_APP_FN(15)
CALIBRATE_APP_FN(16) CALIBRATE_APP_FN(17) CALIBRATE_APP_FN(18) CALIBRATE_APP_FN(19)
CALIBRATE_APP_FN(20) CALIBRATE_APP_FN(21) CALIBRATE_APP_FN(22) CALIBRATE_APP_FN(23)
CALIBRATE_APP_FN(24) CALIBRATE_APP_FN(25) CALIBRATE_APP_FN(26) CALIBRATE_APP_FN(27)
CALIBRATE_APP_FN(28) CALIBRATE_APP_FN(29) CALIBRATE_APP_FN(30) CALIBRATE_APP_FN(31)
CALIBRATE_APP_FN(32) CALIBRATE_APP_FN(33) CALIBRATE_APP_FN(34) CALIBRATE_APP_FN(35)
CALIBRATE_APP_FN(36) CALIBRATE_APP_FN(37) CALIBRATE_APP_FN(38) CALIBRATE_APP_FN(39)
// clang-format on
#undef CALIBRATE_APP_FN

                                                using Fn = std::uint64_t(*)(std::uint64_t);
const Fn kAll[] = {f0,  f1,  f2,  f3,  f4,  f5,  f6,  f7,  f8,  f9,  f10, f11, f12, f13,
                   f14, f15, f16, f17, f18, f19, f20, f21, f22, f23, f24, f25, f26, f27,
                   f28, f29, f30, f31, f32, f33, f34, f35, f36, f37, f38, f39};
}  // namespace calibrate_app

int main(int argc, char** argv) {
  const long n = argc > 1 ? std::atol(argv[1]) : 2'000'000;
  std::uint64_t x = 1;
  for (long i = 0; i < n; ++i) {
    for (auto f : calibrate_app::kAll) x = f(x);
  }
  std::printf("%llu\n", static_cast<unsigned long long>(x));
  perfhat::shutdown();
  return 0;
}
