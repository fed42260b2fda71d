// Fuzz target: POST /v1/budget bodies (libperfhat's collection-budget status, sent by any writer).
// Parsing must never crash; what it accepts must parse again to the same checked document.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "feedback-handler/budget/budget_status.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace perfhat::handler::budget;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  Status s;
  try {
    s = parseStatus(text);
  } catch (const StatusError&) {
    return 0;
  }
  // The stored JSON, with its labels put back, is itself an acceptable status.
  std::string again = s.json;
  again.insert(1, "\"service\":\"x\",");
  try {
    if (parseStatus(again).json != s.json) __builtin_trap();
  } catch (const StatusError&) {
    __builtin_trap();
  }
  return 0;
}
