#include "hybrid_budget.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <string>

namespace perfhat::plan {
namespace {

// Sums of frequencies are compared with MaxF after floating-point additions: a set that fills the
// budget exactly must not be rejected for the last bit.
double fitTolerance(double max_f) { return 1e-9 * std::max(1.0, std::abs(max_f)); }

std::vector<std::size_t> byWeightDescending(const std::vector<EventClass>& classes) {
  std::vector<std::size_t> order(classes.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return classes[a].weight > classes[b].weight;
  });
  return order;
}

// The best `limit` distinct plans offered so far, best first.
class TopPlans {
 public:
  explicit TopPlans(std::size_t limit) : limit_(limit) {}

  bool wouldKeep(double value) const {
    return plans_.size() < limit_ || value > plans_.back().value;
  }
  void offer(const std::vector<bool>& traced, double value, double probing_hz) {
    if (!wouldKeep(value)) return;
    for (const ProbePlan& p : plans_)
      if (p.traced == traced) return;
    ProbePlan plan{traced, probing_hz, value};
    auto at = std::upper_bound(plans_.begin(), plans_.end(), value,
                               [](double v, const ProbePlan& p) { return v > p.value; });
    plans_.insert(at, std::move(plan));
    if (plans_.size() > limit_) plans_.pop_back();
  }
  const std::vector<ProbePlan>& plans() const { return plans_; }

 private:
  std::size_t limit_;
  std::vector<ProbePlan> plans_;
};

// Running sums that give a traced set's value in O(1): Σ_T F, Σ_T F·W and Σ_{not T} r·W.
struct SetSums {
  double traced_f = 0, traced_fw = 0, untraced_rw = 0;

  void trace(const EventClass& c) {
    traced_f += c.frequency_hz;
    traced_fw += c.frequency_hz * c.weight;
    untraced_rw -= c.duty_ratio * c.weight;
  }
  void untrace(const EventClass& c) {
    traced_f -= c.frequency_hz;
    traced_fw -= c.frequency_hz * c.weight;
    untraced_rw += c.duty_ratio * c.weight;
  }
  bool fits(double max_f) const { return traced_f <= max_f + fitTolerance(max_f); }
  double value(double max_f) const {
    return traced_fw + std::max(0.0, max_f - traced_f) * untraced_rw;
  }
};

SetSums nothingTraced(const std::vector<EventClass>& classes) {
  SetSums s;
  for (const EventClass& c : classes) s.untraced_rw += c.duty_ratio * c.weight;
  return s;
}

// Final answers are recomputed from scratch so running-sum drift never reaches the output.
ProbeResult finish(const std::vector<EventClass>& classes, double max_f, const TopPlans& top,
                   ProbeMethod method, bool local_search) {
  ProbeResult r;
  r.method = method;
  r.local_search = local_search;
  std::vector<ProbePlan> plans;
  for (const ProbePlan& p : top.plans())
    plans.push_back(evaluateProbePlan(classes, max_f, p.traced));
  std::stable_sort(plans.begin(), plans.end(),
                   [](const ProbePlan& a, const ProbePlan& b) { return a.value > b.value; });
  if (!plans.empty()) {
    r.best = plans.front();
    r.alternatives.assign(plans.begin() + 1, plans.end());
  }
  return r;
}

void localSearch(const std::vector<EventClass>& classes, double max_f, std::vector<bool>& traced,
                 TopPlans& top) {
  SetSums sums = nothingTraced(classes);
  for (std::size_t i = 0; i < classes.size(); ++i)
    if (traced[i]) sums.trace(classes[i]);
  double current = sums.value(max_f);
  const double eps = 1e-12 * std::max(1.0, std::abs(current));
  std::size_t evaluations = 0;
  auto consider = [&](SetSums candidate) -> bool {
    ++evaluations;
    if (!candidate.fits(max_f)) return false;
    double v = candidate.value(max_f);
    if (top.wouldKeep(v)) top.offer(traced, v, max_f - candidate.traced_f);  // approximate label
    return v > current + eps;
  };
  bool improved = true;
  while (improved && evaluations < kLocalSearchEvaluations) {
    improved = false;
    for (std::size_t i = 0; i < classes.size() && !improved; ++i) {
      SetSums c = sums;
      traced[i] ? c.untrace(classes[i]) : c.trace(classes[i]);
      traced[i] = !traced[i];
      if (consider(c)) {
        sums = c;
        current = c.value(max_f);
        improved = true;
      } else {
        traced[i] = !traced[i];
      }
    }
    for (std::size_t out = 0; out < classes.size() && !improved; ++out) {
      if (!traced[out]) continue;
      for (std::size_t in = 0; in < classes.size() && !improved; ++in) {
        if (traced[in] || evaluations >= kLocalSearchEvaluations) continue;
        SetSums c = sums;
        c.untrace(classes[out]);
        c.trace(classes[in]);
        traced[out] = false;
        traced[in] = true;
        if (consider(c)) {
          sums = c;
          current = c.value(max_f);
          improved = true;
        } else {
          traced[out] = true;
          traced[in] = false;
        }
      }
    }
  }
}

}  // namespace

namespace {

bool solveRatesInOrder(const std::vector<EventClass>& classes, double max_f,
                       const std::vector<std::size_t>& order, long pinned, RatePlan& out) {
  out = RatePlan{};
  out.fraction.assign(classes.size(), 0.0);
  std::vector<double> rate(classes.size());
  double reserved = 0;
  for (std::size_t i = 0; i < classes.size(); ++i) {
    rate[i] = static_cast<long>(i) == pinned ? classes[i].frequency_hz : classes[i].min_rate_hz;
    reserved += rate[i];
  }
  double capacity = max_f - reserved;
  if (capacity < -fitTolerance(max_f)) return false;
  capacity = std::max(0.0, capacity);
  for (std::size_t i : order) {
    double take = std::min(classes[i].frequency_hz - rate[i], capacity);
    rate[i] += take;
    capacity -= take;
  }
  for (std::size_t i = 0; i < classes.size(); ++i) {
    out.fraction[i] = rate[i] >= classes[i].frequency_hz ? 1.0 : rate[i] / classes[i].frequency_hz;
    out.value += rate[i] * classes[i].weight;
  }
  return true;
}

}  // namespace

bool solveRates(const std::vector<EventClass>& classes, double max_f, RatePlan& out, long pinned) {
  return solveRatesInOrder(classes, max_f, byWeightDescending(classes), pinned, out);
}

std::vector<PinnedRatePlan> pinnedRateAlternatives(const std::vector<EventClass>& classes,
                                                   double max_f, const RatePlan& best,
                                                   std::size_t limit) {
  // Pinning class k reports Δ_k = F_k − rate_k more, taken back from the cheapest reported rates
  // above their floors (the greedy's tail), skipping k's own. Prefix sums over the tail give each
  // k's value in O(log n); only the `limit` best are then solved in full.
  const std::vector<std::size_t> order = byWeightDescending(classes);
  const std::size_t n = classes.size();
  std::vector<double> amount(n), position_start(n, 0);
  std::vector<double> cum_amount{0}, cum_loss{0};
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const EventClass& c = classes[*it];
    amount[*it] = best.fraction[*it] * c.frequency_hz - c.min_rate_hz;
    if (amount[*it] <= 0) continue;
    position_start[*it] = cum_amount.back();
    cum_amount.push_back(cum_amount.back() + amount[*it]);
    cum_loss.push_back(cum_loss.back() + amount[*it] * c.weight);
  }
  // Value lost by removing the first x of the tail.
  auto loss = [&](double x) {
    std::size_t m = std::upper_bound(cum_amount.begin(), cum_amount.end(), x) - cum_amount.begin();
    if (m >= cum_amount.size()) return cum_loss.back();
    double weight = (cum_loss[m] - cum_loss[m - 1]) / (cum_amount[m] - cum_amount[m - 1]);
    return cum_loss[m - 1] + (x - cum_amount[m - 1]) * weight;
  };
  struct Candidate {
    double value;
    std::size_t pinned;
  };
  std::vector<Candidate> candidates;
  const double tol = fitTolerance(max_f);
  for (std::size_t k = 0; k < n; ++k) {
    if (best.fraction[k] >= 1.0) continue;
    const EventClass& c = classes[k];
    double own = std::max(0.0, amount[k]);
    double delta = c.frequency_hz - best.fraction[k] * c.frequency_hz;
    if (delta > cum_amount.back() - own + tol) continue;  // the floors leave no room
    double lost =
        own > 0 && position_start[k] < delta ? loss(delta + own) - own * c.weight : loss(delta);
    candidates.push_back({best.value + delta * c.weight - lost, k});
  }
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const Candidate& a, const Candidate& b) { return a.value > b.value; });
  std::vector<PinnedRatePlan> out;
  for (const Candidate& cand : candidates) {
    if (out.size() == limit) break;
    PinnedRatePlan p;
    p.pinned = cand.pinned;
    if (solveRatesInOrder(classes, max_f, order, static_cast<long>(cand.pinned), p.plan))
      out.push_back(std::move(p));
  }
  return out;
}

ProbePlan evaluateProbePlan(const std::vector<EventClass>& classes, double max_f,
                            std::vector<bool> traced) {
  ProbePlan p;
  p.traced = std::move(traced);
  double traced_f = 0, traced_fw = 0, untraced_rw = 0;
  for (std::size_t i = 0; i < classes.size(); ++i) {
    const EventClass& c = classes[i];
    if (p.traced[i]) {
      traced_f += c.frequency_hz;
      traced_fw += c.frequency_hz * c.weight;
    } else {
      untraced_rw += c.duty_ratio * c.weight;
    }
  }
  if (traced_f > max_f + fitTolerance(max_f)) {
    p.probing_hz = -1;
    p.value = traced_fw;
    return p;
  }
  p.probing_hz = std::max(0.0, max_f - traced_f);
  p.value = traced_fw + p.probing_hz * untraced_rw;
  return p;
}

ProbeResult solveProbingExact(const std::vector<EventClass>& classes, double max_f) {
  if (classes.size() > kMaxExactClasses)
    throw std::invalid_argument("exact search is limited to " + std::to_string(kMaxExactClasses) +
                                " classes");
  const std::size_t n = classes.size();
  TopPlans top(kAlternatives + 1);
  SetSums sums = nothingTraced(classes);
  std::vector<bool> traced(classes.size(), false);
  std::uint32_t gray = 0;
  top.offer(traced, sums.value(max_f), max_f);
  for (std::uint64_t step = 1; step < (std::uint64_t{1} << n); ++step) {
    unsigned bit = static_cast<unsigned>(std::countr_zero(step));
    gray ^= 1u << bit;
    if (gray & (1u << bit)) {
      sums.trace(classes[bit]);
    } else {
      sums.untrace(classes[bit]);
    }
    if (!sums.fits(max_f)) continue;
    double v = sums.value(max_f);
    if (!top.wouldKeep(v)) continue;
    for (std::size_t i = 0; i < n; ++i) traced[i] = (gray >> i) & 1u;
    top.offer(traced, v, max_f - sums.traced_f);
  }
  return finish(classes, max_f, top, ProbeMethod::kExact, false);
}

ProbeResult solveProbingApprox(const std::vector<EventClass>& classes, double max_f,
                               bool local_search) {
  TopPlans top(kAlternatives + 1);
  const SetSums none = nothingTraced(classes);
  std::vector<bool> traced(classes.size(), false);
  top.offer(traced, none.value(max_f), max_f);        // S_{0,0}: the proof needs it
  for (std::size_t i = 0; i < classes.size(); ++i) {  // S_{i,0}
    SetSums s = none;
    s.trace(classes[i]);
    if (!s.fits(max_f)) continue;
    traced[i] = true;
    top.offer(traced, s.value(max_f), max_f - s.traced_f);
    traced[i] = false;
  }
  SetSums greedy = none;  // S_{0,j}: trace each class, by weight, that still fits
  for (std::size_t j : byWeightDescending(classes)) {
    SetSums s = greedy;
    s.trace(classes[j]);
    if (!s.fits(max_f)) continue;
    greedy = s;
    traced[j] = true;
    top.offer(traced, greedy.value(max_f), max_f - greedy.traced_f);
  }
  if (local_search) {
    std::vector<bool> start = top.plans().front().traced;
    localSearch(classes, max_f, start, top);
  }
  return finish(classes, max_f, top, ProbeMethod::kHalfApproximation, local_search);
}

ProbeResult solveProbing(const std::vector<EventClass>& classes, double max_f, bool local_search) {
  if (classes.size() <= kMaxExactClasses) return solveProbingExact(classes, max_f);
  return solveProbingApprox(classes, max_f, local_search);
}

}  // namespace perfhat::plan
