// The lazily loaded story repository that the callee-context, interval and repeated-call tests
// parse, and their feedback helper. Durations in nanoseconds.
#pragma once

#include <cstdint>
#include <string>

#include "server/analysis/testing/test_tu.h"

namespace perfhat::analysis::testing {

inline constexpr double kMs = 1e6;

inline constexpr const char* kStoryRepoHeader = R"src(
#include <vector>
struct Story {
  const std::vector<int>& tasks() const;  // lazily loaded: a query the first time only
  int points() const;
};
int pointsOf(const Story& s);
int taskCount(const Story& s);
int mystery(const Story& s);  // no body here, no production data
std::vector<Story> fetchStories();  // a query: fresh stories, their tasks not loaded
)src";

inline FeedbackItem measured(const std::string& key, double p50_ns, double p90_ns, double p99_ns,
                             uint64_t count = 1000) {
  return measuredItem(key, p50_ns, p90_ns, p99_ns, count);
}

}  // namespace perfhat::analysis::testing
