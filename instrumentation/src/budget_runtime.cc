#include "budget_runtime.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <deque>
#include <limits>
#include <memory>
#include <mutex>

#include "engine.h"
#include "perfhat/perfhat.hpp"
#include "thread_annotations.h"

namespace perfhat::budget {

std::atomic<const uint64_t*> g_keep{nullptr};

namespace {
detail::Mutex g_tables_mu;
uint64_t g_serial PERFHAT_GUARDED_BY(g_tables_mu) = 0;
std::deque<std::unique_ptr<uint64_t[]>>& tables() PERFHAT_REQUIRES(g_tables_mu) {
  static auto* t = new std::deque<std::unique_ptr<uint64_t[]>>();  // probes may run at exit
  return *t;
}

uint64_t next_random(detail::Hot* h) noexcept {
  uint64_t x = h->rng;  // xorshift64, the probe's own generator
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  h->rng = x;
  return x;
}

double probability_of(uint64_t thr) noexcept {
  if (thr == ~uint64_t{0}) return 1;
  return static_cast<double>(thr) * 0x1.0p-64;
}

double scale_of(const uint64_t* t, uint32_t site) noexcept {
  return std::bit_cast<double>(t[kTableHeader + t[0] + site]);
}
}  // namespace

uint64_t threshold(double p) noexcept {
  if (!(p > 0)) return 0;
  if (p >= 1) return ~uint64_t{0};
  return static_cast<uint64_t>(std::ldexp(p, 64));
}

uint32_t skip_length(uint64_t x, double p) noexcept {
  constexpr double kMax = kLongestSkip;
  if (!(p > 0)) return static_cast<uint32_t>(kMax);
  if (p >= 1) return 0;
  // Inverse transform: floor(ln U / ln(1 - p)), U uniform on (0, 1].
  const double u = (static_cast<double>(x >> 11) + 1) * 0x1.0p-53;
  const double k = std::floor(std::log(u) / std::log1p(-p));
  return k >= kMax ? static_cast<uint32_t>(kMax) : static_cast<uint32_t>(k);
}

namespace {
// The decision of one call that is not inside a skip run. `runs`: draw the skip run that follows
// (function sites); without it every call is a fresh draw (request roots).
Take decide(uint32_t site, detail::Hot* h, detail::Slot& s, bool runs) noexcept {
  // The run that just ended: its calls happened. The count first, then the run cleared: the
  // budget's snapshot adds run - skip of a run in progress.
  const uint32_t run = s.budget_run.load(std::memory_order_relaxed);
  if (run != 0) {
    s.count.store(s.count.load(std::memory_order_relaxed) + run, std::memory_order_relaxed);
    s.budget_run.store(0, std::memory_order_relaxed);
  }
  const uint64_t* t = g_keep.load(std::memory_order_acquire);
  const bool covered = t != nullptr && site < t[0];
  const uint64_t thr = covered ? t[kTableHeader + site] : ~uint64_t{0};
  // The end of a run is the call it was drawn to take, worth 1 / the rate the run was drawn with
  // (read by weight() when the call is recorded, at its exit). Without a run in progress, or
  // after a capped one: a fresh draw at the current rate.
  const double p = probability_of(thr);
  const bool run_ended = s.budget_p > 0;
  bool kept = run_ended || thr == ~uint64_t{0} || (thr != 0 && next_random(h) < thr);
  // Read only for a kept call: the scales lie n words past the thresholds, another line.
  const double scale = kept && covered ? scale_of(t, site) : 1.0;
  // A re-arm window's record (a scaled site) is not taken inside another one on this thread: a
  // sparse record costs microseconds with its lines cold, far over the calibrated price the
  // enclosing call's duration leaves out (macro_compensation.h), which would add to the caller's
  // duration.
  if (kept && scale > 1 && h->owner != nullptr) {
    if (h->owner->rearm_span != 0)
      kept = false;
    else
      h->owner->rearm_kept = true;
  }
  if (kept && h->owner != nullptr && (run_ended || thr != ~uint64_t{0} || scale != 1)) {
    h->owner->budget_weight_site = site;
    h->owner->budget_weight =
        static_cast<float>(scale) / (run_ended ? s.budget_p : static_cast<float>(p));
  }
  s.budget_p = 0;
  if (thr == ~uint64_t{0}) {
    if (!kept) return Take::kPass;  // inside a re-arm record: the next call is a fresh draw
    return run_ended ? Take::kKeepSampled : Take::kKeep;
  }
  if (!runs) return kept ? Take::kKeepSampled : Take::kPass;
  // A run drawn longer than kMaxRun (rate 0: always) passes over kMaxRun calls and ends in a
  // fresh draw, not a taken call. Unbiased (a geometric skip is memoryless: the draw after the
  // cap is the rest of the same run, in distribution), and the owner re-reads its rate at least
  // every kMaxRun calls, so a new plan applies on every thread without another thread writing
  // the slot.
  const uint32_t k = thr == 0 ? kMaxRun : skip_length(next_random(h), p);
  const uint32_t len = std::min(k, kMaxRun);
  if (k < kMaxRun) s.budget_p = static_cast<float>(p);
  s.budget_skip.store(len, std::memory_order_relaxed);
  s.budget_run.store(len, std::memory_order_relaxed);
  return kept ? Take::kKeepSampled : Take::kPass;
}
}  // namespace

Take take(uint32_t site, detail::Hot* h, detail::Slot& s) noexcept {
  return decide(site, h, s, true);
}

Take take_request(uint32_t site, detail::Hot* h, detail::Slot& s) noexcept {
  return decide(site, h, s, false);
}

double weight(uint32_t site, detail::Hot* h) noexcept {
  if (detail::ThreadState* ts = h->owner; ts != nullptr && ts->budget_weight_site == site) {
    ts->budget_weight_site = 0;
    return ts->budget_weight;
  }
  const uint64_t* t = g_keep.load(std::memory_order_acquire);
  if (t == nullptr || site >= t[0]) return 1;
  const uint64_t thr = t[kTableHeader + site];
  if (thr == 0) return 1;
  if (thr == ~uint64_t{0}) return scale_of(t, site);
  return scale_of(t, site) * std::ldexp(1.0, 64) / static_cast<double>(thr);
}

double probability(uint32_t site) noexcept {
  const uint64_t* t = g_keep.load(std::memory_order_acquire);
  if (t == nullptr || site >= t[0]) return 1;
  return probability_of(t[kTableHeader + site]);
}

void publish(const std::vector<double>& probability, const std::vector<double>& scale) {
  std::vector<uint64_t> thresholds(probability.size());
  for (std::size_t i = 0; i < probability.size(); ++i) thresholds[i] = threshold(probability[i]);
  publish_thresholds(thresholds, scale);
}

std::vector<uint64_t> published_thresholds() {
  // Under the lock: the table read stays retained while it is copied.
  detail::Lock l(g_tables_mu);
  const uint64_t* t = g_keep.load(std::memory_order_acquire);
  if (t == nullptr) return {};
  return std::vector<uint64_t>(t + kTableHeader, t + kTableHeader + t[0]);
}

std::vector<double> published_scales() {
  detail::Lock l(g_tables_mu);
  const uint64_t* t = g_keep.load(std::memory_order_acquire);
  if (t == nullptr) return {};
  std::vector<double> out(t[0]);
  for (uint32_t i = 0; i < t[0]; ++i) out[i] = scale_of(t, i);
  return out;
}

void publish_thresholds(const std::vector<uint64_t>& thresholds, const std::vector<double>& scale) {
  if (thresholds.empty()) return clear();
  const std::size_t n = thresholds.size();
  auto table = std::make_unique<uint64_t[]>(kTableHeader + 2 * n);
  table[0] = n;
  std::copy(thresholds.begin(), thresholds.end(), table.get() + kTableHeader);
  for (std::size_t i = 0; i < n; ++i) {
    // A scale that could not weigh a call (not finite, under 1) is 1: the plan's own weight.
    const double x = i < scale.size() && std::isfinite(scale[i]) && scale[i] >= 1 ? scale[i] : 1;
    table[kTableHeader + n + i] = std::bit_cast<uint64_t>(x);
  }
  detail::Lock l(g_tables_mu);
  // Serial 0 is never used (a table read before any publication would look new).
  if (static_cast<uint32_t>(++g_serial) == 0) ++g_serial;
  table[1] = g_serial;
  g_keep.store(table.get(), std::memory_order_release);
  tables().push_back(std::move(table));
  while (tables().size() > kRetainedTables) tables().pop_front();
}

void clear() { g_keep.store(nullptr, std::memory_order_release); }

}  // namespace perfhat::budget
