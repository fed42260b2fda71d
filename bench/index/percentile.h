// The p-th percentile (0..1, nearest rank) of the index benchmark's samples.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace perfhat::bench {

inline double pct(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(p * (v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

}  // namespace perfhat::bench
