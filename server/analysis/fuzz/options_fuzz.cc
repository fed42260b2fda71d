// Fuzz target: the `analysis` section of .perfhat.json (outside input). Must never crash;
// malformed input must raise OptionsError only.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "server/analysis/options.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    perfhat::analysis::AnalysisOptions o = perfhat::analysis::parseAnalysisOptions(text);
    (void)o;
  } catch (const perfhat::analysis::OptionsError&) {
  }
  return 0;
}
