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

  // A window moves a price by at most this factor, up or down, toward its target (below). The
  // target is the sliding window's mean, so an ordinary window moves it by its share of the
  // timed calls; one window moves it further only when it outweighs the others: at start-up,
  // when the first window with kMinCalls timed calls is the whole target (its threads' first
  // entries, lines never touched before), or in a burst of timed calls. Twice: such a window can
  // double or halve a price, not make it the tenfold of one slow window, while a real step as
  // large as the calibration's to the in-situ price (35x on the sample service) is reached in
  // ceil(log2 35) = 6 windows, as the sliding window fills.
  static constexpr double kMaxStepPerWindow = 2;
  // The least price step() charges (seconds), and its start when the calibration says 0 (a
  // calibrated report no dearer than detection): the step limit needs a price to scale.
  static constexpr double kMinPriceS = 1e-9;

  // One window: the timing totals so far (detail::self_timing_totals), the clock's ns per tick,
  // and the sliding window's length in windows.
  void add(const detail::SelfTimingTotals& totals, double ns_per_tick, std::size_t windows);
  // Once a window, after add(): the price charged for a kind (seconds: a recorded call's
  // in-probe work, a taken request root's context), its target reached by at most
  // kMaxStepPerWindow from the last window's price (from `calibrated` at first), never under
  // kMinPriceS.
  double step(detail::SelfTimedKind kind, double calibrated);
  // The target: the timed calls' robust mean over the sliding window, once it holds kMinCalls of
  // them, the calibration's price before that and as a floor.
  double target_s(detail::SelfTimedKind kind, double calibrated) const;
  // The timed calls of a kind in the sliding window, and their mean (seconds; 0 without any).
  uint64_t calls(detail::SelfTimedKind kind) const;
  double mean_s(detail::SelfTimedKind kind) const;
  // The last window's timed seconds of a kind (0 before the first window).
  double last_window_s(detail::SelfTimedKind kind) const {
    return windows_.empty() ? 0 : windows_.back().seconds[kind];
  }
  // Their mean without the ones over the cap above (seconds; 0 without any).
  double robust_mean_s(detail::SelfTimedKind kind, double calibrated) const;
  uint64_t dropped() const { return last_.dropped; }   // timed calls over the cap, so far
  double ns_per_tick() const { return ns_per_tick_; }  // the last window's clock rate (0: none)
  void clear() { *this = InSituPrices(); }

 private:
  struct Window {
    uint64_t calls[detail::kSelfTimedKinds] = {};
    double seconds[detail::kSelfTimedKinds] = {};
    uint64_t bucket_calls[detail::kSelfTimedKinds][detail::kSelfTimingBuckets] = {};
    uint64_t bucket_ticks[detail::kSelfTimedKinds][detail::kSelfTimingBuckets] = {};
  };
  std::deque<Window> windows_;
  detail::SelfTimingTotals last_;
  double ns_per_tick_ = 0;                        // the last window's
  double charged_[detail::kSelfTimedKinds] = {};  // step()'s last price of each kind (0: none)
  bool started_ = false;  // last_ holds the totals at the previous window's end
};

}  // namespace perfhat::budget
