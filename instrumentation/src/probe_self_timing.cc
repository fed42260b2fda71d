#include "probe_self_timing.h"

#include <algorithm>

namespace perfhat::detail {
namespace {

// Process-wide: a timed call is one in kSelfTimingPeriod of the recorded ones, a few hundred a
// second on a busy service, so the shared lines are written rarely; on lines of their own, apart
// from the flags every probe reads.
struct alignas(64) Sums {
  std::atomic<uint64_t> calls[kSelfTimedKinds] = {};
  std::atomic<uint64_t> ticks[kSelfTimedKinds] = {};
  std::atomic<uint64_t> bucket_calls[kSelfTimedKinds][kSelfTimingBuckets] = {};
  std::atomic<uint64_t> bucket_ticks[kSelfTimedKinds][kSelfTimingBuckets] = {};
  std::atomic<uint64_t> dropped{0};
};
Sums g_sums;

}  // namespace

alignas(64) std::atomic<bool> g_self_timing{false};
alignas(64) std::atomic<uint64_t> g_self_timing_cap{0};
alignas(64) std::atomic<uint64_t> g_self_timing_fence{0};
alignas(64) std::atomic<uint64_t> g_self_timing_entry_fence{0};

SelfTimingFences measure_fence_ticks() noexcept {
  // A few of each: the first ones may miss the code or be interrupted; the least is the reads'.
  constexpr int kPairs = 16;
  uint64_t pair = ~uint64_t{0}, entry = ~uint64_t{0};
  for (int i = 0; i < kPairs; ++i) {
    uint64_t a = fenced_ticks();
    uint64_t b = fenced_ticks();
    if (b >= a) pair = std::min(pair, b - a);
    a = fenced_ticks();
    b = now_ticks();
    if (b >= a) entry = std::min(entry, b - a);
  }
  SelfTimingFences f;
  f.pair = pair == ~uint64_t{0} ? 0 : pair;
  f.entry = entry == ~uint64_t{0} ? 0 : entry;
  return f;
}

void note_self_timing(SelfTimedKind kind, uint64_t ticks) noexcept {
  const uint64_t cap = g_self_timing_cap.load(std::memory_order_relaxed);
  if (cap != 0 && ticks > cap) {
    g_sums.dropped.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  uint64_t fences = g_self_timing_fence.load(std::memory_order_relaxed);
  if (kind != kSelfTimedPassed) fences += g_self_timing_entry_fence.load(std::memory_order_relaxed);
  ticks -= std::min(ticks, fences);
  g_sums.calls[kind].fetch_add(1, std::memory_order_relaxed);
  g_sums.ticks[kind].fetch_add(ticks, std::memory_order_relaxed);
  const int b = self_timing_bucket(ticks);
  g_sums.bucket_calls[kind][b].fetch_add(1, std::memory_order_relaxed);
  g_sums.bucket_ticks[kind][b].fetch_add(ticks, std::memory_order_relaxed);
}

SelfTimingTotals self_timing_totals() noexcept {
  SelfTimingTotals t;
  for (int k = 0; k < kSelfTimedKinds; ++k) {
    t.calls[k] = g_sums.calls[k].load(std::memory_order_relaxed);
    t.ticks[k] = g_sums.ticks[k].load(std::memory_order_relaxed);
    for (int b = 0; b < kSelfTimingBuckets; ++b) {
      t.bucket_calls[k][b] = g_sums.bucket_calls[k][b].load(std::memory_order_relaxed);
      t.bucket_ticks[k][b] = g_sums.bucket_ticks[k][b].load(std::memory_order_relaxed);
    }
  }
  t.dropped = g_sums.dropped.load(std::memory_order_relaxed);
  return t;
}

}  // namespace perfhat::detail
