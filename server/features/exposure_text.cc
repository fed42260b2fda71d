#include "server/features/exposure_text.h"

#include <cmath>

#include "server/features/features.h"

namespace perfhat::features {
namespace {

std::string releases(const Exposure& e) {
  std::string out = e.releases.size() == 1 ? "release " : "releases ";
  for (size_t i = 0; i < e.releases.size(); ++i) out += (i ? ", " : "") + e.releases[i];
  return out;
}

// "24 %": whole percents, "< 1 %" for a sliver that is not zero.
std::string percent(double share) {
  const double pct = share * 100;
  if (pct > 0 && pct < 1) return "< 1 %";
  return std::to_string(static_cast<long>(std::lround(pct))) + " %";
}

}  // namespace

std::string exposureSummary(const Exposure& e) {
  std::string s = "observed on " + std::to_string(e.replicas_probed) + " of " +
                  std::to_string(e.replicas) + " replicas, ";
  s += e.traffic_basis == "requests" ? percent(e.traffic_share) + " of traffic"
                                     : "traffic not counted";
  return s;
}

std::string unprobedText(const Exposure& e) {
  return "not probed in " + releases(e) + ": no variant of its " + std::to_string(e.replicas) +
         " replicas carries this probe";
}

std::string exposureRows(const Exposure& e) {
  if (unprobed(e)) return "| exposure | " + unprobedText(e) + " |\n";
  std::string row = "| exposure | " + exposureSummary(e) + " (" + releases(e) + ")";
  if (e.traffic_share > 0 && e.traffic_share < 1) {
    row += "; counts scaled to all traffic from " +
           formatCount(static_cast<double>(e.observed_count)) + " observed";
  }
  return row + " |\n";
}

}  // namespace perfhat::features
