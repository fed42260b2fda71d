// A probe entry's cost when its cache lines are cold: the start-up calibration's loops run the
// probe thousands of times in a row, on warm lines, but in a service a site's slot, its site
// record and its code were last touched a request ago and have been evicted since. Measured by
// timing single calls, each right after a sweep of a buffer larger than the first-level caches.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace perfhat::budget {

// Median over `trials` of one call of `pair` timed alone: `prepare` sets it up, `evict` then
// evicts what that touched, the call is timed, `finish` (untimed) tidies up; less the median of an
// empty interval timed right after `evict` (the clock's own cost). Clock ticks.
uint64_t coldPairTicks(const std::function<void()>& prepare, const std::function<void()>& pair,
                       const std::function<void()>& finish, const std::function<void()>& evict,
                       uint64_t (*clock)(), int trials = 31);

// Writes every line of a buffer of `bytes` (by default 512 KiB, several times the first-level
// data and instruction caches of common x86 and ARM cores): what a request's worth of other work
// does to a probe's lines. The buffer is allocated once, so a sweep costs no page faults.
class CacheSweep {
 public:
  explicit CacheSweep(std::size_t bytes = std::size_t{512} << 10) : buffer_(bytes) {}
  void operator()();

 private:
  std::vector<char> buffer_;
};

}  // namespace perfhat::budget
