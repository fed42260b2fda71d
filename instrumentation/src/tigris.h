// Tigris phase-2 analysis (Mertz 2021, ch. 4): Grouping (KS normality test -> sigma-bands or
// quantile split into five groups) and Classification (set algebra of the TigrisDSL filter) over
// the phase-1 metric estimates of every event type (function). Also scope patterns and the
// static-metric CSV import.
#pragma once

#include <array>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tigris_dsl.h"

namespace perfhat::tigris {

// Table 4.3 metric names (phase-1 estimators). Static metrics from CSV use their column name.
namespace metric {
inline constexpr std::string_view kInvocationFrequency = "invocation_frequency";
inline constexpr std::string_view kExecutionTime = "execution_time";
inline constexpr std::string_view kComputationPattern = "computation_pattern";
inline constexpr std::string_view kErrorLevel = "error_level";
inline constexpr std::string_view kConcurrencyLevel = "concurrency_level";
inline constexpr std::string_view kInterArrivalTime = "inter_arrival_time";
inline constexpr std::string_view kUserBehavior = "user_behavior";
inline constexpr std::string_view kMemoryConsumption = "memory_consumption";
}  // namespace metric

// Which metric quantifies a criterion and in which direction. higher_is_more = false inverts the
// scale: for Changeability bound to Computation Pattern a *higher* std-dev of the return size is
// *less* changeable (Table 4.1, DESIGN §10).
struct Binding {
  std::string metric;
  bool higher_is_more = true;
};

struct Bindings {
  std::array<std::optional<Binding>, kCriterionCount> by_criterion;
  // Thesis evaluation bindings plus the reference's suggested defaults for error-prone,
  // concurrent and latent. maintainable and state-variation stay unbound (static metrics).
  static Bindings defaults();
  void set(Criterion c, Binding b) { by_criterion[static_cast<int>(c)] = std::move(b); }
  const std::optional<Binding>& get(Criterion c) const { return by_criterion[static_cast<int>(c)]; }
};

// Tunables of the Grouping step, with the thesis/DESIGN defaults.
struct GroupingOptions {
  double ks_alpha = 0.05;
  double k_inner = 1.0;  // sigma-band edges at mu +- k_inner*sigma and mu +- k_outer*sigma
  double k_outer = 2.0;
  // true (default, DESIGN §10): more ⊇ most (upper quarter), less ⊇ least; false: five disjoint
  // groups as labelled in Table 4.1.
  bool cumulative = true;
  // KS with estimated parameters has almost no power on a handful of points; below this many
  // event types the distribution-free quantile split is used. Table 4.1 (5 methods) is such a case.
  size_t min_points_for_normality = 8;
};

enum class GroupingMethod { kSigmaBands, kQuantiles, kDegenerate };

// Result of grouping one metric: for each event type, its (disjoint) group 0..4 =
// least, less, average, more, most.
struct Grouping {
  GroupingMethod method = GroupingMethod::kQuantiles;
  double ks_p = 0;
  std::vector<int> group;  // per event, 0..4
  // Whether event i is selected by `m` (cumulative or disjoint semantics).
  bool selects(size_t i, Modifier m, bool cumulative) const;
};

// Groups values (already oriented: higher = more). Quantile split (thesis §4.3): Q1, Q3 by linear
// interpolation; lower quarter = values <= Q1 split at its median, upper quarter = values >= Q3
// split at its median: least < med(lower) <= less <= Q1 < average < Q3 <= more <= med(upper) <
// most. This boundary rule reproduces every label of Table 4.1.
Grouping group_values(const std::vector<double>& values, const GroupingOptions& opt);

// One event type (function) with its metric estimates.
struct EventMetrics {
  std::string name;
  std::map<std::string, double, std::less<>> metrics;
};

struct ClassifyResult {
  std::vector<bool> relevant;  // parallel to the input events
  std::string error;           // non-empty: a criterion used by the filter has no binding
  std::map<std::string, Grouping, std::less<>> groupings;  // per metric, for diagnostics
};

// Classification: evaluates the filter over the events. Events missing a bound metric count as 0
// for that metric (a function never observed with an error has error level 0).
ClassifyResult classify(const Node& filter, const std::vector<EventMetrics>& events,
                        const Bindings& bindings, const GroupingOptions& opt = {});

// Wildcard ('*' any run, '?' one char) allow/deny scope, as Tigris' @ComponentScan. Empty allow
// list = everything allowed; deny wins.
struct Scope {
  std::vector<std::string> allow;
  std::vector<std::string> deny;
  bool admits(std::string_view name) const;
  // Parses "agile::*,-agile::detail::*" (comma separated, '-' prefix = deny).
  static Scope parse(std::string_view spec);
};
bool glob_match(std::string_view pattern, std::string_view text);

// Static metrics CSV (Understand export style): header "Name,Metric1,Metric2,...", then one row
// per event type. Quoted fields with "" escapes are accepted. Non-numeric cells are skipped.
struct StaticMetrics {
  std::map<std::string, std::map<std::string, double, std::less<>>, std::less<>> by_name;
  std::string error;  // "line 3: ..." on malformed input (rows before it are kept)
};
StaticMetrics parse_static_metrics_csv(std::string_view text);

}  // namespace perfhat::tigris
