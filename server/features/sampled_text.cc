#include "server/features/sampled_text.h"

#include <algorithm>

#include "server/features/features.h"

namespace perfhat::features::detail {
namespace {

// "500 records of ≈ 5k calls (10 %)": how much of the figure was seen.
std::string sampledShare(const analysis::Node& n) {
  std::string out =
      formatCount(n.sampled_records) + " records of ≈ " + formatCount(n.sampled_calls) + " calls";
  if (n.sampled_records > 0) {
    out += " (" + formatPercent(std::min(1.0, n.sampled_records / n.sampled_calls)).substr(1) +
           " recorded)";
  }
  return out;
}

}  // namespace

std::string sampledHoverRow(const analysis::Node& n) {
  if (!n.estimatedFromSamples()) return "";
  return "| estimated from samples | " + sampledShare(n) +
         ": counts and percentiles are estimates |\n";
}

std::string sampledTooltipLine(const analysis::Node& n) {
  if (!n.estimatedFromSamples()) return "";
  return "\nestimated from samples: " + sampledShare(n);
}

std::string sampledLabelSuffix(const analysis::Node& n) {
  return n.estimatedFromSamples() ? " (sampled)" : "";
}

}  // namespace perfhat::features::detail
