// Fuzz target: OTLP/JSON trace export bodies (POST /v1/traces, application/json).
// Any input must either decode or throw OtlpError; nothing else (crash, other exception).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "feedback-handler/otlp/otlp.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view body(reinterpret_cast<const char*>(data), size);
  try {
    perfhat::otlp::ExportRequest r = perfhat::otlp::decodeJson(body);
    for (const auto& s : r.spans) {
      if (s.resource >= r.resources.size()) __builtin_trap();
    }
  } catch (const perfhat::otlp::OtlpError&) {
  }
  return 0;
}
