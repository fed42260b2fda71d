// Fuzz target: RFC 3339 timestamps (the read API's batchGet windows, sent by any client). Parsing
// must never overflow or crash; whatever parses must format and parse back to the same second.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "feedback-handler/util/rfc3339.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace perfhat::handler;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto ns = parseRfc3339(text);
  if (!ns) return 0;
  const std::string formatted = formatRfc3339(*ns);
  constexpr int64_t kSecond = 1'000'000'000;
  const int64_t floor_s = *ns / kSecond - (*ns % kSecond < 0 ? 1 : 0);
  const auto again = parseRfc3339(formatted);
  if (!again || *again != floor_s * kSecond) __builtin_trap();
  return 0;
}
