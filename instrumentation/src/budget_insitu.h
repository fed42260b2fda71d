// The collection budget's in-situ prices: what a recorded call's own work and a taken request
// root's context cost on the application threads, from the calls the probes timed where they ran
// (probe_self_timing.h), over the sliding window. They replace the start-up calibration's warm
// prices once enough calls were timed; the calibration stays the fallback (a process that records
// little) and the floor (the timed interval leaves out the probe's inline part and its call,
// which the calibration's pair includes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>

#include "probe_self_timing.h"

namespace perfhat::budget {

class InSituPrices {
 public:
  // Fewer timed calls of a kind than this in the sliding window: its calibrated price stands.
  static constexpr uint64_t kMinCalls = 32;
  // A price leaves out the timed calls longer than the largest of these: a preemption or an
  // interrupt inside the interval, not the probe's work (the cap in note_self_timing only drops
  // the ones a whole time slice lengthened). Relative to the calibration and to the timed calls'
  // median, so a service whose probes run cold keeps its long ones. Within the histogram's
  // factor of 2 (probe_self_timing.h).
  static constexpr double kCapMinNs = 5e3;
  static constexpr double kCapPerCalibrated = 20;
  static constexpr double kCapPerMedian = 8;

  // One window: the timing totals so far (detail::self_timing_totals), the clock's ns per tick,
  // and the sliding window's length in windows.
  void add(const detail::SelfTimingTotals& totals, double ns_per_tick, std::size_t windows);
  // Seconds: a recorded call's in-probe work, a taken request root's context.
  double report_s(double calibrated) const { return price(detail::kSelfTimedRecord, calibrated); }
  double request_s(double calibrated) const { return price(detail::kSelfTimedRequest, calibrated); }
  // The timed calls of a kind in the sliding window, and their mean (seconds; 0 without any).
  uint64_t calls(detail::SelfTimedKind kind) const;
  double mean_s(detail::SelfTimedKind kind) const;
  // The last window's timed seconds of a kind (0 before the first window).
  double last_window_s(detail::SelfTimedKind kind) const {
    return windows_.empty() ? 0 : windows_.back().seconds[kind];
  }
  // Their mean without the ones over the cap above (seconds; 0 without any).
  double robust_mean_s(detail::SelfTimedKind kind, double calibrated) const;
  uint64_t dropped() const { return last_.dropped; }  // timed calls over the cap, so far
  void clear() { *this = InSituPrices(); }

 private:
  double price(detail::SelfTimedKind kind, double calibrated) const;

  struct Window {
    uint64_t calls[detail::kSelfTimedKinds] = {};
    double seconds[detail::kSelfTimedKinds] = {};
    uint64_t bucket_calls[detail::kSelfTimedKinds][detail::kSelfTimingBuckets] = {};
    uint64_t bucket_ticks[detail::kSelfTimedKinds][detail::kSelfTimingBuckets] = {};
  };
  std::deque<Window> windows_;
  detail::SelfTimingTotals last_;
  double ns_per_tick_ = 0;  // the last window's
  bool started_ = false;    // last_ holds the totals at the previous window's end
};

}  // namespace perfhat::budget
