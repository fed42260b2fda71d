// Fuzz target: OTLP protobuf trace export bodies (POST /v1/traces, application/x-protobuf).
// Any input must either decode or throw OtlpError; decoded output must re-encode and decode to
// the same span count (the encoder/decoder pair agrees on everything the decoder accepts), and
// decoding into a request recycled across inputs (as the server does) must agree with a fresh one.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "feedback-handler/otlp/otlp.h"
#include "feedback-handler/otlp/otlp_encode.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view body(reinterpret_cast<const char*>(data), size);
  static perfhat::otlp::ExportRequest recycled;
  bool fresh_ok = false;
  try {
    perfhat::otlp::ExportRequest r = perfhat::otlp::decodeProtobuf(body);
    fresh_ok = true;
    perfhat::otlp::ExportRequest again =
        perfhat::otlp::decodeProtobuf(perfhat::otlp::encodeProtobuf(r));
    if (again.spans.size() != r.spans.size()) __builtin_trap();
    perfhat::otlp::decodeProtobuf(body, recycled);
    if (perfhat::otlp::encodeProtobuf(recycled) != perfhat::otlp::encodeProtobuf(r)) {
      __builtin_trap();
    }
  } catch (const perfhat::otlp::OtlpError&) {
    if (fresh_ok) __builtin_trap();  // the recycled decode threw where the fresh one did not
  }
  return 0;
}
