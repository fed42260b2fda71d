#include "feedback-handler/variants/exposure.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "common/from_chars_whole.h"
#include "common/release_id.h"

namespace perfhat::handler {
namespace {

// A variant or replica number: digits only, at most 1,000,000 (perfhat-plan's bound).
bool index(std::string_view s, int64_t& out) {
  if (s.empty() || s.size() > 7) return false;
  return fromCharsWhole(s, out) && out >= 0 && out <= 1'000'000;
}

}  // namespace

std::string trafficSub(std::string_view release, std::string_view variant,
                       std::string_view replica) {
  int64_t v = 0, r = 0;
  if (!isReleaseId(release) || !index(variant, v)) return "";
  if (!replica.empty() && !index(replica, r)) replica = {};
  return std::string(release) + "|" + std::to_string(v) + "|" +
         (replica.empty() ? std::string() : std::to_string(r));
}

bool parseTrafficSub(std::string_view sub, VariantTraffic& out) {
  const size_t a = sub.find('|');
  if (a == std::string_view::npos) return false;
  const size_t b = sub.find('|', a + 1);
  if (b == std::string_view::npos) return false;
  const std::string_view release = sub.substr(0, a), variant = sub.substr(a + 1, b - a - 1),
                         replica = sub.substr(b + 1);
  if (!isReleaseId(release) || !index(variant, out.variant)) return false;
  out.release = std::string(release);
  out.replica = -1;
  return replica.empty() || index(replica, out.replica);
}

TrafficIndex TrafficIndex::of(const std::vector<VariantTraffic>& traffic) {
  TrafficIndex t;
  for (const VariantTraffic& v : traffic) {
    t.by_service[v.service][v.release][v.variant] += v.requests;
    t.all[v.release][v.variant] += v.requests;
  }
  return t;
}

std::optional<Exposure> exposureOf(std::string_view key, const std::vector<std::string>& services,
                                   const TrafficIndex& traffic, ReleaseCatalog& catalog) {
  // Requests per release and variant, in the services asked about.
  TrafficIndex::ByRelease merged;
  const TrafficIndex::ByRelease* requests = &traffic.all;
  if (!services.empty()) {
    for (const std::string& service : services) {
      auto it = traffic.by_service.find(service);
      if (it == traffic.by_service.end()) continue;
      for (const auto& [release, by_variant] : it->second) {
        for (const auto& [variant, n] : by_variant) merged[release][variant] += n;
      }
    }
    requests = &merged;
  }
  Exposure e;
  double total = 0, probed = 0;
  for (const auto& [release, by_variant] : *requests) {
    auto manifest = catalog.find(release);
    if (!manifest) continue;
    e.releases.push_back(release);
    e.replicas += manifest->assignment.size();
    e.replicas_probed += manifest->replicasProbing(key);
    for (const auto& [variant, n] : by_variant) {
      total += n;
      if (manifest->probes(variant, key)) probed += n;
    }
  }
  if (e.releases.empty()) return std::nullopt;
  if (total > 0) {
    e.traffic_basis = "requests";
    e.traffic_share = probed / total;
  } else {
    e.traffic_basis = "replicas";
    e.traffic_share = e.replicas > 0
                          ? static_cast<double>(e.replicas_probed) / static_cast<double>(e.replicas)
                          : 0;
  }
  return e;
}

void normalizeByExposure(FeedbackItem& item, Exposure exposure) {
  if (item.stats) {
    exposure.observed_count = item.stats->count;
    const double share = exposure.traffic_share;
    if (share > 0 && share < 1) {
      Stats& s = *item.stats;
      s.count = static_cast<uint64_t>(std::llround(static_cast<double>(s.count) / share));
      s.errors = static_cast<uint64_t>(std::llround(static_cast<double>(s.errors) / share));
      s.rate_per_s /= share;
    }
  }
  item.exposure = std::move(exposure);
}

}  // namespace perfhat::handler
