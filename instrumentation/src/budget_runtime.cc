#include "budget_runtime.h"

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
}  // namespace

uint64_t threshold(double p) noexcept {
  if (!(p > 0)) return 0;
  if (p >= 1) return ~uint64_t{0};
  return static_cast<uint64_t>(std::ldexp(p, 64));
}

uint32_t skip_length(uint64_t x, double p) noexcept {
  constexpr double kMax = kRunCut - 1.0;
  if (!(p > 0)) return static_cast<uint32_t>(kMax);
  if (p >= 1) return 0;
  // Inverse transform: floor(ln U / ln(1 - p)), U uniform on (0, 1].
  const double u = (static_cast<double>(x >> 11) + 1) * 0x1.0p-53;
  const double k = std::floor(std::log(u) / std::log1p(-p));
  return k >= kMax ? static_cast<uint32_t>(kMax) : static_cast<uint32_t>(k);
}

Take take(uint32_t site, detail::Hot* h, detail::Slot& s) noexcept {
  // The run that just ended: its calls happened. The count first, then the run cleared: the
  // budget's snapshot adds run - skip of a run in progress.
  const uint32_t run = s.budget_run.load(std::memory_order_relaxed);
  if (run != 0) {
    s.count.store(s.count.load(std::memory_order_relaxed) + passed_over(run, 0),
                  std::memory_order_relaxed);
    s.budget_run.store(0, std::memory_order_relaxed);
  }
  const uint64_t* t = g_keep.load(std::memory_order_acquire);
  const uint64_t thr = t == nullptr || site >= t[0] ? ~uint64_t{0} : t[kTableHeader + site];
  // The end of a run is the call it was drawn to take, worth 1 / the rate the run was drawn with
  // (read by weight() when the call is recorded, at its exit). Without a run in progress: a fresh
  // draw at the current rate.
  const double p = probability_of(thr);
  const bool run_ended = s.budget_p > 0 && (run & kRunCut) == 0;  // a cut run has no end
  const bool kept = run_ended || thr == ~uint64_t{0} || (thr != 0 && next_random(h) < thr);
  if (kept && h->owner != nullptr && (run_ended || thr != ~uint64_t{0})) {
    h->owner->budget_weight_site = site;
    h->owner->budget_weight = 1.0f / (run_ended ? s.budget_p : static_cast<float>(p));
  }
  if (thr == ~uint64_t{0}) {
    s.budget_p = 0;
    return run_ended ? Take::kKeepSampled : Take::kKeep;
  }
  if (thr == 0) {
    // Never taken (probing mode's untraced classes): a run of bounded length that ends in a
    // fresh draw, not a taken call. An unbounded run would outlast a plan that traces the class
    // again: its calls would stay skipped for 2^32 calls.
    s.budget_p = 0;
    s.budget_skip.store(kZeroRateRun, std::memory_order_relaxed);
    s.budget_run.store(kZeroRateRun, std::memory_order_relaxed);
    return kept ? Take::kKeepSampled : Take::kPass;
  }
  s.budget_p = static_cast<float>(p);
  const uint32_t k = skip_length(next_random(h), p);
  s.budget_skip.store(k, std::memory_order_relaxed);
  s.budget_run.store(k, std::memory_order_relaxed);
  return kept ? Take::kKeepSampled : Take::kPass;
}

double weight(uint32_t site, detail::Hot* h) noexcept {
  if (detail::ThreadState* ts = h->owner; ts != nullptr && ts->budget_weight_site == site) {
    ts->budget_weight_site = 0;
    return ts->budget_weight;
  }
  const uint64_t* t = g_keep.load(std::memory_order_acquire);
  if (t == nullptr || site >= t[0]) return 1;
  const uint64_t thr = t[kTableHeader + site];
  if (thr == ~uint64_t{0} || thr == 0) return 1;
  return std::ldexp(1.0, 64) / static_cast<double>(thr);
}

double probability(uint32_t site) noexcept {
  const uint64_t* t = g_keep.load(std::memory_order_acquire);
  if (t == nullptr || site >= t[0]) return 1;
  return probability_of(t[kTableHeader + site]);
}

void cut_run(detail::Slot& s) noexcept {
  const uint32_t skip = s.budget_skip.load(std::memory_order_relaxed);
  if (skip == 0) return;  // no run, or only its last (taken) call to come
  const uint32_t run = s.budget_run.load(std::memory_order_relaxed);
  if (run & kRunCut) return;
  s.budget_run.store(passed_over(run, skip) | kRunCut, std::memory_order_relaxed);
  s.budget_skip.store(0, std::memory_order_relaxed);
}

void publish_plan(const std::vector<double>& before, const std::vector<double>& after) {
  publish(after);
  std::vector<bool> changed(after.size(), false);
  bool any = false;
  for (std::size_t id = 1; id < after.size(); ++id) {
    const double was = id < before.size() ? before[id] : 1.0;
    changed[id] = threshold(was) != threshold(after[id]);
    any = any || changed[id];
  }
  if (any) detail::Engine::get().cut_budget_runs(changed);
}

void publish(const std::vector<double>& probability) {
  auto table = std::make_unique<uint64_t[]>(kTableHeader + probability.size());
  table[0] = probability.size();
  for (std::size_t i = 0; i < probability.size(); ++i)
    table[kTableHeader + i] = threshold(probability[i]);
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
