// Exposure (issue 23): under probe distribution a function's data comes only from the replicas
// whose variant probes it, so its counts cover that share of the traffic. Reads divide counts by
// the share and say what it was (FeedbackItem::exposure), and name the requested functions no
// variant probes (BatchGetResponse::unprobed) so the editor says "not probed", not "no data".
//
// Traffic: every export of a process running a variant carries perfhat.release / .variant /
// .replica; ingest keeps per minute and variant the weighted request roots (SERVER spans; every
// variant probes them) and all records, as aggregate rows of kind AggKind::kTraffic with
// sub = trafficSub(...). Without request roots the share of replicas stands in for traffic.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/feedback.h"
#include "feedback-handler/variants/release_catalog.h"

namespace perfhat::handler {

// One release variant's traffic in a read window, summed over its rows.
struct VariantTraffic {
  std::string service, release;
  int64_t variant = -1, replica = -1;  // replica -1: not told
  double requests = 0, calls = 0;
};

// The sub-key of a traffic row, "release|variant|replica" ("" when `release` is not a valid
// release id or `variant` not a number: such exports carry no traffic row).
std::string trafficSub(std::string_view release, std::string_view variant,
                       std::string_view replica);
// Its inverse; false for a sub-key trafficSub cannot have written.
bool parseTrafficSub(std::string_view sub, VariantTraffic& out);

// A read window's traffic, grouped once per read: release → variant → requests, per service and
// for every service together.
struct TrafficIndex {
  using ByRelease = std::map<std::string, std::map<int64_t, double>>;
  std::map<std::string, ByRelease> by_service;
  ByRelease all;
  static TrafficIndex of(const std::vector<VariantTraffic>& traffic);
};

// The exposure of `key` under the window's traffic of `services` (every service when empty);
// nullopt when no release with a known manifest had traffic there. Time: the releases and
// variants of those services, not the rows read.
std::optional<Exposure> exposureOf(std::string_view key, const std::vector<std::string>& services,
                                   const TrafficIndex& traffic, ReleaseCatalog& catalog);

// Counts of `item` divided by the exposure's traffic share (the observed count is kept in it).
void normalizeByExposure(FeedbackItem& item, Exposure exposure);

}  // namespace perfhat::handler
