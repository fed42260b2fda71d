#include "budget_runtime.h"

#include <cmath>
#include <deque>
#include <memory>
#include <mutex>

#include "perfhat/perfhat.hpp"

namespace perfhat::budget {

std::atomic<const uint64_t*> g_keep{nullptr};

namespace {
std::mutex g_tables_mu;
std::deque<std::unique_ptr<uint64_t[]>>& tables() {
  static auto* t = new std::deque<std::unique_ptr<uint64_t[]>>();  // probes may run at exit
  return *t;
}
}  // namespace

uint64_t threshold(double p) noexcept {
  if (!(p > 0)) return 0;
  if (p >= 1) return ~uint64_t{0};
  return static_cast<uint64_t>(std::ldexp(p, 64));
}

bool keep(uint32_t site, detail::Hot* h) noexcept {
  const uint64_t* t = g_keep.load(std::memory_order_acquire);
  if (t == nullptr || site >= t[0]) return true;
  const uint64_t thr = t[1 + site];
  if (thr == ~uint64_t{0}) return true;
  if (thr == 0) return false;
  uint64_t x = h->rng;  // xorshift64, the probe's own generator
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  h->rng = x;
  return x < thr;
}

double weight(uint32_t site) noexcept {
  const uint64_t* t = g_keep.load(std::memory_order_acquire);
  if (t == nullptr || site >= t[0]) return 1;
  const uint64_t thr = t[1 + site];
  if (thr == ~uint64_t{0} || thr == 0) return 1;
  return std::ldexp(1.0, 64) / static_cast<double>(thr);
}

void publish(const std::vector<double>& probability) {
  auto table = std::make_unique<uint64_t[]>(1 + probability.size());
  table[0] = probability.size();
  for (std::size_t i = 0; i < probability.size(); ++i) table[1 + i] = threshold(probability[i]);
  std::lock_guard<std::mutex> l(g_tables_mu);
  g_keep.store(table.get(), std::memory_order_release);
  tables().push_back(std::move(table));
  while (tables().size() > kRetainedTables) tables().pop_front();
}

void clear() { g_keep.store(nullptr, std::memory_order_release); }

}  // namespace perfhat::budget
