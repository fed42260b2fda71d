// The task repository that the diff-aware prediction and data-flow iteration tests parse, and
// their feedback helper (p90 and p99 from the mean). Durations in nanoseconds.
#pragma once

#include <cstdint>
#include <string>

#include "server/analysis/testing/test_tu.h"

namespace perfhat::analysis::testing {

inline constexpr const char* kTaskRepoHeader = R"src(
#include <vector>
struct Task { int id; };
struct Repo {
  std::vector<Task> tasks(int story) const;
  int effort(int task) const;
  int owner(int task) const;
  int lookup(int user) const;
};
)src";

inline FeedbackItem measuredMean(const std::string& key, double mean_ns, uint64_t count = 100) {
  return measuredItem(key, mean_ns, 1.2 * mean_ns, 1.5 * mean_ns, count);
}

}  // namespace perfhat::analysis::testing
