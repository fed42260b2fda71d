// The words for production values estimated from samples (a node whose calls were recorded at
// a rate below 1: analysis::Node::estimatedFromSamples()), shared by hover and inlay hints.
#pragma once

#include <string>

#include "server/analysis/snapshot.h"

namespace perfhat::features::detail {

// A hover table row "| estimated from samples | … |\n", or "" when the node's data is complete.
std::string sampledHoverRow(const analysis::Node& n);

// A tooltip line "\nestimated from samples: …", or "".
std::string sampledTooltipLine(const analysis::Node& n);

// What an inlay label gains for a measured value: " (sampled)", or "".
std::string sampledLabelSuffix(const analysis::Node& n);

}  // namespace perfhat::features::detail
