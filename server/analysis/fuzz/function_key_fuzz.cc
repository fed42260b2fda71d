// Fuzz target: the function-key normalizer takes keys from spans and datasets (outside input).
// It must never crash or throw, and normalizing must be idempotent on its own output.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "common/function_key.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  std::string key = perfhat::normalizeFunctionKey(text);
  (void)perfhat::qualifiedName(key);
  (void)perfhat::normalizeTypeName(text);
  (void)perfhat::demangle(text);
  return 0;
}
