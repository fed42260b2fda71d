// The hybrid trace/sample budget of Metz, Lencevicius and Gonzalez (seed 002): under a budget of
// MaxF reported events per second, which event classes to trace and at which rate to sample the
// rest so that the information value Σ (reported or hit rate)·weight is largest.
//   Base case (rates):  continuous knapsack, solved exactly by the greedy on weight.
//   Probing case:       each class traced or left to one shared periodic probe; NP-hard, solved
//                       exactly for small n and by the paper's ½-approximation above that.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace perfhat::plan {

struct EventClass {
  std::string name;
  double frequency_hz = 0;  // F_i, events per second
  double duty_ratio = 0;    // r_i = EventTime_i / EventPeriod_i: chance that a probe hits one
  double weight = 1;        // W_i, the user's importance
  double min_rate_hz = 0;   // base case: report at least this rate (0 ≤ min ≤ F_i)
};

// Base case: per-class reporting rates F_red,i = x_i·F_i.
struct RatePlan {
  std::vector<double> fraction;  // x_i in [0, 1], same order as the classes
  double value = 0;              // Σ x_i·F_i·W_i
};

// Fractional-knapsack greedy with floors: every class first gets its minimum rate, the rest of
// MaxF goes to classes in non-increasing weight order (ties: input order). O(n log n).
// `pinned` (optional, index) is reported in full before the others, as "always trace" asks.
// Returns false when the floors (plus the pinned class) alone exceed max_f.
bool solveRates(const std::vector<EventClass>& classes, double max_f, RatePlan& out,
                long pinned = -1);

// Base-case alternatives for "always trace this class": for each class the optimum does not
// report in full, the best plan that does; the `limit` best of them. O(n log n).
struct PinnedRatePlan {
  std::size_t pinned = 0;
  RatePlan plan;
};
std::vector<PinnedRatePlan> pinnedRateAlternatives(const std::vector<EventClass>& classes,
                                                   double max_f, const RatePlan& best,
                                                   std::size_t limit);

// Probing case: a traced set and the probe frequency it leaves, F_probing = MaxF − Σ_T F_i.
struct ProbePlan {
  std::vector<bool> traced;  // same order as the classes
  double probing_hz = 0;
  double value = 0;  // Σ_T F_i·W_i + F_probing·Σ_{not T} r_i·W_i
};

// Value of a traced set; probing_hz < 0 when the set does not fit in max_f.
ProbePlan evaluateProbePlan(const std::vector<EventClass>& classes, double max_f,
                            std::vector<bool> traced);

enum class ProbeMethod { kExact, kHalfApproximation };

struct ProbeResult {
  ProbeMethod method = ProbeMethod::kExact;
  bool local_search = false;
  ProbePlan best;
  std::vector<ProbePlan> alternatives;  // the next best distinct plans seen, best first
};

inline constexpr std::size_t kAlternatives = 5;
inline constexpr std::size_t kMaxExactClasses = 20;  // 2^20 subsets, O(1) each
// Local search stops after this many plan evaluations whatever n is (bounded time).
inline constexpr std::size_t kLocalSearchEvaluations = 20'000'000;

// Every subset (Gray-code order, O(1) per subset). n ≤ kMaxExactClasses.
ProbeResult solveProbingExact(const std::vector<EventClass>& classes, double max_f);
// The paper's ½-approximation: trace nothing, trace one class, or a greedy pass by weight that
// traces each class still fitting; the best of these. With local_search, first-improvement
// add/drop/swap moves from there. Its value is more than half the optimum (Theorem 2).
ProbeResult solveProbingApprox(const std::vector<EventClass>& classes, double max_f,
                               bool local_search);
// Exact up to kMaxExactClasses classes, the approximation above.
ProbeResult solveProbing(const std::vector<EventClass>& classes, double max_f, bool local_search);

}  // namespace perfhat::plan
