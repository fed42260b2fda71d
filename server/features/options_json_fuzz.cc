// Fuzz target: features Options from arbitrary JSON text (.perfhat.json, initializationOptions).
// Any input must either parse into valid options or throw OptionsError, never crash.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include <nlohmann/json.hpp>

#include "server/features/options_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const perfhat::features::Options o = perfhat::features::parseOptions(text);
    // What was accepted must survive a round trip unchanged.
    nlohmann::json j = o;
    perfhat::features::Options back;
    perfhat::features::from_json(j, back);
    if (back.main_statistic != o.main_statistic || back.profile != o.profile ||
        back.hotspot_share != o.hotspot_share) {
      std::abort();
    }
  } catch (const perfhat::features::OptionsError&) {
  }
  return 0;
}
