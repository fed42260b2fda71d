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

// The lower quartile over `trials` of one call of `pair` timed alone: `prepare` sets it up,
// `evict` then evicts what that touched, the call is timed, `finish` (untimed) tidies up; less
// the lower quartile of an empty interval timed right after `evict` (the clock's own cost).
// Clock ticks.
uint64_t coldPairTicks(const std::function<void()>& prepare, const std::function<void()>& pair,
                       const std::function<void()>& finish, const std::function<void()>& evict,
                       uint64_t (*clock)(), int trials = 31);

// Writes every line of a buffer twice the size of the second-level cache (sysconf, else 4 MiB;
// at most 64 MiB): what a request's worth of other work, and the other processes sharing the
// core, do to a probe's lines between two requests; they come back from the last-level cache or
// memory. (A sweep of the first-level caches only, 512 KiB, found cold entries no dearer than
// warm ones: second-level hits are too cheap to be what perf sees on the sample service.) The
// buffer is allocated once, so a sweep costs no page faults.
class CacheSweep {
 public:
  CacheSweep() : CacheSweep(defaultBytes()) {}
  explicit CacheSweep(std::size_t bytes) : buffer_(bytes) {}
  static std::size_t defaultBytes();
  void operator()();

 private:
  std::vector<char> buffer_;
};

}  // namespace perfhat::budget
