#include "histogram.h"

#include <array>

namespace perfhat::detail {

const double* sketch_bin_bounds() noexcept {
  // A function-local static: probes may record during other translation units' static
  // initialization, before a namespace-scope table would be built.
  static const std::array<double, kBinLimit> bounds = [] {
    std::array<double, kBinLimit> b{};
    const double log_gamma = std::log(kSketchGamma);
    for (int i = 0; i < kBinLimit; ++i) b[static_cast<size_t>(i)] = std::exp(i * log_gamma);
    return b;
  }();
  return bounds.data();
}

}  // namespace perfhat::detail
