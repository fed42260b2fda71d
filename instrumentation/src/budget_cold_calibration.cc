#include "budget_cold_calibration.h"

#include <unistd.h>

#include <algorithm>
#include <vector>

namespace perfhat::budget {
namespace {

// The lower quartile: a trial the scheduler or another core's traffic slowed only ever takes
// longer, and on a loaded machine half the trials can be (the median read 78-551 ns across
// runs of the sample service at load 10-14).
uint64_t lower_quartile(std::vector<uint64_t>& v) {
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 4), v.end());
  return v[v.size() / 4];
}

}  // namespace

uint64_t coldPairTicks(const std::function<void()>& prepare, const std::function<void()>& pair,
                       const std::function<void()>& finish, const std::function<void()>& evict,
                       uint64_t (*clock)(), int trials) {
  trials = std::max(trials, 1);
  std::vector<uint64_t> with, without;
  with.reserve(static_cast<std::size_t>(trials));
  without.reserve(static_cast<std::size_t>(trials));
  prepare();  // first-use work (tables, thread state) is not the cold entry being measured
  pair();
  finish();
  for (int t = 0; t < trials; ++t) {
    evict();
    uint64_t a = clock();
    uint64_t b = clock();
    without.push_back(b - a);
    prepare();
    evict();
    a = clock();
    pair();
    b = clock();
    with.push_back(b - a);
    finish();
  }
  const uint64_t floor = lower_quartile(without), cold = lower_quartile(with);
  return cold > floor ? cold - floor : 0;
}

std::size_t CacheSweep::defaultBytes() {
  long l2 = -1;
#ifdef _SC_LEVEL2_CACHE_SIZE
  l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
  const std::size_t level2 = l2 > 0 ? static_cast<std::size_t>(l2) : std::size_t{4} << 20;
  return std::min(2 * level2, std::size_t{64} << 20);
}

void CacheSweep::operator()() {
  volatile char* p = buffer_.data();
  for (std::size_t i = 0; i < buffer_.size(); i += 64) p[i] = static_cast<char>(p[i] + 1);
}

}  // namespace perfhat::budget
