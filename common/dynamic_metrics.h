// One function's dynamic metrics as the handler's `GET /v1/dynamic?key=K` answers them
// (docs/dynamic-metrics.md): visits, callers and callees with counts, self and inclusive time,
// demand rank, and the window the figures cover. Typed data only; the editor words them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace perfhat {

struct DynamicNeighbour {
  std::string key;
  double count = 0;  // weighted calls along this edge in the window
  bool operator==(const DynamicNeighbour&) const = default;
};

struct DynamicMetrics {
  std::string key;
  // The read window and the part of it the service's data covers, in Unix seconds (UTC).
  int64_t window_from_s = 0, window_to_s = 0;
  std::optional<int64_t> covered_from_s, covered_to_s;  // absent: no data in the window
  double visits = 0;
  std::optional<double> calls_per_hour;            // visits over the covered part
  std::vector<DynamicNeighbour> callers, callees;  // most calls first, at most the asked limit
  uint64_t fan_in = 0, fan_out = 0;                // all distinct callers / callees
  std::optional<double> self_p50_ns, self_mean_ns, inclusive_p50_ns, inclusive_mean_ns;
  double demand_ns = 0;
  std::optional<uint64_t> demand_rank;  // 1 = largest demand; absent when not called
  uint64_t ranked_functions = 0;
  bool leaf = false;
  bool never_called = false;  // the handler knows the function and saw no call in the window
  bool operator==(const DynamicMetrics&) const = default;
};

// Parses a `GET /v1/dynamic?key=` body. Throws FeedbackFormatError (common/feedback.h) naming the
// field on malformed input.
DynamicMetrics parseDynamicMetrics(std::string_view body);

// "2026-11-25T20:00:00Z" (the handler's form; fractions and offsets accepted) as Unix seconds.
std::optional<int64_t> parseUtcSeconds(std::string_view text);

// Whether the service's data spans the read window: it starts within `slack` of the window's
// start and ends within `slack` of its end, slack = max(5 min, 5 % of the window). Only then can
// "no call in the window" mean "not called in production" rather than "not reporting yet".
bool coversWindow(const DynamicMetrics& m);

}  // namespace perfhat
